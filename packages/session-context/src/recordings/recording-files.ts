import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readRecording, type Recording } from "./read-recording.js";

/** One recording file found under a folder, as `openprogram recordings list` shows it. */
export interface FoundRecording {
  path: string;
  /** Bytes on disk. */
  size: number;
  /** When the file was last written. */
  modified: Date;
  /** null when it cannot be replayed (`problem` says why). */
  calls: number | null;
  models: string[];
  provider: string | null;
  /** Token counts the recorded replies reported (null: none reported). */
  inputTokens: number | null;
  outputTokens: number | null;
  /** Why it cannot be replayed (cut short, an unknown format_version), or null. */
  problem: string | null;
}

/** Folders never searched: installed packages and git's own. */
const SKIPPED_FOLDERS = new Set(["node_modules", ".git"]);

/**
 * Every recording under `dir` (recursively, in path order): a `.jsonl` file
 * whose first line is a recording header. Other JSONL files are passed over;
 * a recording that cannot be replayed is listed with its problem.
 */
export function findRecordings(dir: string): FoundRecording[] {
  const found: FoundRecording[] = [];
  const visit = (folder: string): void => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) visit(path);
      } else if (entry.isFile() && entry.name.endsWith(".jsonl") && startsWithHeader(path)) {
        found.push(describe(path));
      }
    }
  };
  visit(dir);
  return found;
}

/** Sums of one recording: its calls, the models asked and the tokens the replies reported. */
export function recordingTotals(recording: Recording): {
  models: string[];
  inputTokens: number | null;
  outputTokens: number | null;
} {
  let inputTokens: number | null = null;
  let outputTokens: number | null = null;
  for (const call of recording.calls) {
    const end = call.events.at(-1);
    const usage = end?.type === "response" ? end.response.usage : undefined;
    if (usage?.inputTokens !== undefined) inputTokens = (inputTokens ?? 0) + usage.inputTokens;
    if (usage?.outputTokens !== undefined) outputTokens = (outputTokens ?? 0) + usage.outputTokens;
  }
  return { models: [...new Set(recording.calls.map((call) => call.model))], inputTokens, outputTokens };
}

/**
 * The recordings `prune` may remove: each `__recordings__/<name>.jsonl`
 * under `dir` whose name no test file beside that `__recordings__` folder
 * mentions as a string literal (`"<name>"`, `'<name>'` or `` `<name>` ``).
 * That is where `useRecording(name)` looks (the calling test file's folder),
 * so such a recording is replayed by no test. A name a test builds at run
 * time, or a recording read through `useRecording(name, { dir })` from
 * elsewhere, is not seen: review the list before removing.
 */
export function unreferencedRecordings(dir: string): FoundRecording[] {
  const testsOf = new Map<string, string[]>();
  const testsIn = (folder: string): string[] => {
    let tests = testsOf.get(folder);
    if (!tests) {
      tests = readdirSync(folder, { withFileTypes: true })
        .filter((entry) => entry.isFile() && TEST_FILE.test(entry.name))
        .map((entry) => readFileSync(join(folder, entry.name), "utf8"));
      testsOf.set(folder, tests);
    }
    return tests;
  };
  return findRecordings(dir).filter((found) => {
    const folder = dirname(found.path);
    if (basename(folder) !== "__recordings__") return false;
    const name = basename(found.path, ".jsonl");
    const quoted = [`"${name}"`, `'${name}'`, `\`${name}\``];
    return !testsIn(dirname(folder)).some((text) => quoted.some((literal) => text.includes(literal)));
  });
}

/** Test files as vitest finds them by default: `*.test.*` and `*.spec.*` (js, ts, mjs, mts, cjs, cts, jsx, tsx). */
const TEST_FILE = /\.(?:test|spec)\.[cm]?[jt]sx?$/;

function startsWithHeader(path: string): boolean {
  try {
    const text = readFileSync(path, "utf8");
    const first = text.slice(0, text.indexOf("\n") === -1 ? undefined : text.indexOf("\n"));
    const header = JSON.parse(first) as { type?: unknown };
    return header.type === "header";
  } catch {
    return false;
  }
}

function describe(path: string): FoundRecording {
  const stat = statSync(path);
  const base = { path, size: stat.size, modified: stat.mtime };
  try {
    const recording = readRecording(path);
    return {
      ...base,
      calls: recording.calls.length,
      provider: recording.provider,
      ...recordingTotals(recording),
      problem: null,
    };
  } catch (error) {
    const problem = (error as { problem?: unknown }).problem;
    return {
      ...base,
      calls: null,
      models: [],
      provider: null,
      inputTokens: null,
      outputTokens: null,
      problem: typeof problem === "string" ? problem : (error as Error).message,
    };
  }
}

import { statSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { StoreWriteError } from "../errors.js";
import type { UsageBucket } from "../usage/usage-buckets.js";
import { FILE_MODE, renameFilesInPlace, tempPathFor } from "./atomic-file.js";
import type { SessionPaths } from "./layout.js";
import { reportStoreProblem } from "./registry.js";
import { readRegularFile } from "./safe-open.js";
import { takeSpare } from "./spare-files.js";

/**
 * `<session>/usage.json`: the session's token usage by day and model, kept at
 * each turn's end and committed with the turn, so adding up a whole store
 * reads one small file per session instead of every node. Python OpenProgram
 * reads neither it nor anything in it (its `git add -A` just carries it along).
 */
export const USAGE_TOTAL_FILE = "usage.json";

/** Bump when the file's shape changes: an older file is then rebuilt from the nodes. */
const USAGE_TOTAL_VERSION = 1;

/** The file as written (snake_case, like the rest of the store's files). */
interface UsageTotalFile {
  version: number;
  /** history/'s mtime (ns) when the total was made: any node written since changes it. */
  history_mtime_ns: string;
  buckets: Array<{
    day: string;
    model: string;
    calls: number;
    calls_without_usage: number;
    input_tokens: number;
    output_tokens: number;
    cached_input_tokens: number;
  }>;
}

/**
 * Writes the session's usage total from its usage buckets (kept node by node:
 * HistoryFiles.usageBuckets); the turn end calls it before the turn's commit.
 * history/'s mtime is read before the nodes, so a node written meanwhile
 * makes the total stale (rebuilt on read), never wrong.
 * Not fsynced: a total lost or torn by a crash reads as missing and is
 * rebuilt from the nodes, which are durable. Never fails the turn: a total
 * that cannot be written is reported once as a warning and rebuilt on read.
 */
export async function recordUsageTotal(paths: SessionPaths, buckets: () => UsageBucket[]): Promise<void> {
  try {
    await writeUsageTotal(paths, buckets);
  } catch (error) {
    reportStoreProblem(
      `The usage total of ${paths.dir} could not be written (${(error as Error).message}); it is rebuilt from the nodes when read.`,
    );
  }
}

async function writeUsageTotal(paths: SessionPaths, buckets: () => UsageBucket[]): Promise<void> {
  const fingerprint = historyFingerprint(paths.dir);
  const file: UsageTotalFile = {
    version: USAGE_TOTAL_VERSION,
    history_mtime_ns: fingerprint,
    buckets: buckets().map((bucket) => ({
      day: bucket.day,
      model: bucket.model,
      calls: bucket.calls,
      calls_without_usage: bucket.callsWithoutUsage,
      input_tokens: bucket.inputTokens,
      output_tokens: bucket.outputTokens,
      cached_input_tokens: bucket.cachedInputTokens,
    })),
  };
  // Renamed into place from a spare file of the turn's when there is one (spare-files.ts), else from a temp file
  // created on the thread pool; not fsynced (the total is rebuilt from the nodes when it does not match them).
  await renameFilesInPlace(
    [{ path: join(paths.dir, USAGE_TOTAL_FILE), data: `${JSON.stringify(file)}\n` }],
    false,
    () => takeSpare(paths),
  );
}

/**
 * The session's usage buckets from its total, or null when there is none, it
 * cannot be read, or nodes were written since (a crash before the turn end, a
 * turn written by Python OpenProgram): the caller then rebuilds from the nodes.
 */
export function readUsageTotal(
  sessionDir: string,
  fingerprint: string = historyFingerprint(sessionDir),
): UsageBucket[] | null {
  let file: UsageTotalFile;
  try {
    file = JSON.parse(readRegularFile(join(sessionDir, USAGE_TOTAL_FILE), "utf8")) as UsageTotalFile;
  } catch {
    return null;
  }
  if (file?.version !== USAGE_TOTAL_VERSION || !Array.isArray(file.buckets)) return null;
  if (file.history_mtime_ns !== fingerprint) return null;
  return file.buckets.map((bucket) => ({
    day: String(bucket.day),
    model: String(bucket.model),
    calls: Number(bucket.calls) || 0,
    callsWithoutUsage: Number(bucket.calls_without_usage) || 0,
    inputTokens: Number(bucket.input_tokens) || 0,
    outputTokens: Number(bucket.output_tokens) || 0,
    cachedInputTokens: Number(bucket.cached_input_tokens) || 0,
  }));
}

/**
 * The mtime (ns) of `<sessionDir>/history`: node writes rename files into it, so every one changes it
 * ("none" without history/). Takes the directory, not SessionPaths: a store-wide query does this for
 * every session, and building the whole set of paths each time showed in its profile.
 */
export function historyFingerprint(sessionDir: string): string {
  return String(statSync(join(sessionDir, "history"), { bigint: true, throwIfNoEntry: false })?.mtimeNs ?? "none");
}

/** Temp file and rename (named so git and the doctor know it as a temp file), without fsync. */
export async function replaceFile(path: string, text: string): Promise<void> {
  const temporary = tempPathFor(path);
  try {
    const handle = await open(temporary, "wx", FILE_MODE);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw new StoreWriteError(path, error);
  }
}

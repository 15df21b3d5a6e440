import { rmSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import { clipLine } from "@openprogram/session-context/messages";
import {
  findRecordings,
  readRecording,
  unreferencedRecordings,
  type FoundRecording,
  type RecordedCall,
  type Recording,
} from "@openprogram/session-context/recordings";
import type { CommandContext } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { formatTimestamp, writeJson, writeLine, writeText } from "../output.js";
import { reportFailure } from "../report.js";
import { formatTable } from "../table.js";

/** Flags of `openprogram recordings show|check`. */
export interface RecordingFlags {
  json?: boolean;
}

/** One call as `show` lists it. */
interface CallSummary {
  call_index: number;
  model: string;
  /** The last message sent (what this call asked), as "role: text". */
  last_message: string;
  messages: number;
  tools: number;
  /** The reply's text, the tools it asked for, or the error the call ended in. */
  reply: string;
  usage: { input_tokens: number | null; output_tokens: number | null };
  events: number;
}

/** `openprogram recordings show <file>`: the calls, their models, tokens, and a short view of each request and reply. */
export async function showRecordingCommand(
  file: string,
  flags: RecordingFlags,
  context: CommandContext,
): Promise<number> {
  const recording = read(file, flags, context);
  if (typeof recording === "number") return recording;
  const calls = recording.calls.map(summary);
  if (flags.json) {
    writeJson(context.io.stdout, { path: recording.path, provider: recording.provider, calls });
    return EXIT_CODES.ok;
  }
  const { io } = context;
  const models = [...new Set(calls.map((call) => call.model))];
  const tokens = (pick: (call: CallSummary) => number | null): number =>
    calls.reduce((sum, call) => sum + (pick(call) ?? 0), 0);
  writeLine(
    io.stderr,
    `${recording.path}: ${calls.length} call${calls.length === 1 ? "" : "s"} to ${recording.provider ?? "no provider"}` +
      ` (${models.join(", ") || "no model"}), ${tokens((call) => call.usage.input_tokens)} tokens in, ` +
      `${tokens((call) => call.usage.output_tokens)} out`,
  );
  writeText(
    io.stdout,
    formatTable(
      ["CALL", "MODEL", "TOKENS", "ASKED", "REPLY"],
      calls.map((call) => [
        String(call.call_index),
        call.model,
        `${call.usage.input_tokens ?? "-"}/${call.usage.output_tokens ?? "-"}`,
        clipLine(call.last_message, 50),
        clipLine(call.reply, 50),
      ]),
    ),
  );
  return EXIT_CODES.ok;
}

/** `openprogram recordings check <file>`: exit 0 when the recording can be replayed, else 2 naming what is wrong. */
export async function checkRecordingCommand(
  file: string,
  flags: RecordingFlags,
  context: CommandContext,
): Promise<number> {
  const recording = read(file, flags, context);
  if (typeof recording === "number") return recording;
  if (flags.json) writeJson(context.io.stdout, { ok: true, path: recording.path, calls: recording.calls.length });
  else writeLine(context.io.stdout, `${recording.path}: ${recording.calls.length} calls, replayable`);
  return EXIT_CODES.ok;
}

function read(file: string, flags: RecordingFlags, context: CommandContext): Recording | number {
  try {
    return readRecording(file);
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
}

function summary(call: RecordedCall): CallSummary {
  const last = call.request.messages.at(-1);
  const end = call.events.at(-1);
  const response = end?.type === "response" ? end.response : null;
  const reply =
    end?.type === "error"
      ? `error [${end.error.code}]: ${end.error.message}`
      : response?.toolCalls?.length
        ? `${response.text ? `${response.text} ` : ""}(tools: ${response.toolCalls.map((tool) => tool.name).join(", ")})`
        : (response?.text ?? "");
  return {
    call_index: call.callIndex,
    model: call.model,
    last_message: last ? `${last.role}: ${last.content}` : "",
    messages: call.request.messages.length,
    tools: call.request.tools?.length ?? 0,
    reply,
    usage: { input_tokens: response?.usage?.inputTokens ?? null, output_tokens: response?.usage?.outputTokens ?? null },
    events: call.events.length,
  };
}

/** Flags of `openprogram recordings prune`. */
export interface PruneFlags {
  json?: boolean;
  /** Remove them; without it, only say what would be removed. */
  yes?: boolean;
}

/** `openprogram recordings list [dir]`: every recording under dir, with its calls, models, tokens, size and date. */
export async function listRecordingsCommand(
  dir: string | undefined,
  flags: RecordingFlags,
  context: CommandContext,
): Promise<number> {
  const root = folder(dir, flags, context);
  if (typeof root === "number") return root;
  const found = findRecordings(root);
  if (flags.json) {
    writeJson(context.io.stdout, { dir: root, recordings: found.map((item) => foundJson(root, item)) });
    return EXIT_CODES.ok;
  }
  if (found.length === 0) {
    writeLine(context.io.stderr, `No recordings under ${root} (a recording is a .jsonl file with a header line).`);
    return EXIT_CODES.ok;
  }
  writeText(
    context.io.stdout,
    formatTable(
      ["FILE", "CALLS", "MODELS", "TOKENS", "SIZE", "MODIFIED"],
      found.map((item) => [
        relative(root, item.path),
        item.calls === null ? `cannot replay: ${item.problem ?? "?"}` : String(item.calls),
        clipLine(item.models.join(", ") || "-", 40),
        `${item.inputTokens ?? "-"}/${item.outputTokens ?? "-"}`,
        formatBytes(item.size),
        formatTimestamp(item.modified.getTime() / 1000),
      ]),
    ),
  );
  return EXIT_CODES.ok;
}

/**
 * `openprogram recordings prune [dir]`: the recordings under `__recordings__` folders that no test file beside
 * the folder names (what useRecording would replay); listed only, removed with --yes.
 */
export async function pruneRecordingsCommand(
  dir: string | undefined,
  flags: PruneFlags,
  context: CommandContext,
): Promise<number> {
  const root = folder(dir, flags, context);
  if (typeof root === "number") return root;
  const { io } = context;
  const unused = unreferencedRecordings(root);
  const removed: string[] = [];
  if (flags.yes === true)
    for (const item of unused) {
      try {
        rmSync(item.path);
        removed.push(item.path);
      } catch (error) {
        return reportFailure(context, error, { json: flags.json === true, during: "setup" });
      }
    }
  if (flags.json) {
    writeJson(io.stdout, {
      dir: root,
      unreferenced: unused.map((item) => foundJson(root, item)),
      removed: removed.map((path) => relative(root, path)),
    });
    return EXIT_CODES.ok;
  }
  if (unused.length === 0) {
    writeLine(io.stderr, `Every recording under __recordings__ folders in ${root} is named by a test beside it.`);
    return EXIT_CODES.ok;
  }
  for (const item of unused) writeLine(io.stdout, relative(root, item.path));
  writeLine(
    io.stderr,
    flags.yes === true
      ? `Removed ${unused.length} recording${unused.length === 1 ? "" : "s"} no test names.`
      : `${unused.length} recording${unused.length === 1 ? "" : "s"} no test beside ${unused.length === 1 ? "it" : "them"} names; nothing removed. ` +
          "Check the list (a name a test builds at run time is not seen), then run again with --yes to remove them.",
  );
  return EXIT_CODES.ok;
}

/** The folder to search, or the exit code after saying it is not one. */
function folder(dir: string | undefined, flags: { json?: boolean }, context: CommandContext): string | number {
  const root = resolve(context.io.cwd, dir ?? ".");
  if (statSync(root, { throwIfNoEntry: false })?.isDirectory()) return root;
  return reportFailure(
    context,
    new InvalidInputError(`${root} is not a folder; give the folder to search for recordings (default: here).`),
    { json: flags.json === true, during: "setup" },
  );
}

function foundJson(root: string, item: FoundRecording): Record<string, unknown> {
  return {
    path: relative(root, item.path),
    calls: item.calls,
    models: item.models,
    provider: item.provider,
    input_tokens: item.inputTokens,
    output_tokens: item.outputTokens,
    size: item.size,
    modified: item.modified.toISOString(),
    problem: item.problem,
  };
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

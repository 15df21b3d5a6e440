import { readFileSync } from "node:fs";
import type { ModelRequest } from "../providers/types.js";
import { RecordingFormatError } from "./recording-errors.js";
import { RECORDING_FORMAT_VERSION, type RecordedEvent, type RecordingLine } from "./recording-format.js";

/** One provider call as a recording holds it. */
export interface RecordedCall {
  callIndex: number;
  model: string;
  provider: string;
  request: ModelRequest;
  events: RecordedEvent[];
  /** When the request went out and each event arrived (epoch ms; null: not recorded), for a paced replay. */
  times: { request: number | null; events: Array<number | null> };
}

/** A whole recording, calls in call-index order. */
export interface Recording {
  path: string;
  /** The provider named in the header, or that of the first call (null: neither). */
  provider: string | null;
  /** The retries the recorded run allowed (header `max_retries`), if it said. */
  maxRetries?: number;
  calls: RecordedCall[];
}

/**
 * Reads and checks a recording: the header's format_version must be ours,
 * call indexes run 0, 1, 2, ... and every call ends with a call_end whose
 * count matches its events (a recording cut short by a crash is refused
 * rather than replayed in part).
 */
export function readRecording(path: string): Recording {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new RecordingFormatError(path, `it cannot be read (${(error as Error).message})`);
  }
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const parsed = lines.map((line, index) => parseLine(path, line, index + 1));
  const header = parsed[0];
  if (header?.type !== "header") throw new RecordingFormatError(path, "the first line is not a header");
  if (header.format_version !== RECORDING_FORMAT_VERSION) {
    throw new RecordingFormatError(
      path,
      `format_version ${JSON.stringify(header.format_version)} is not ${RECORDING_FORMAT_VERSION}, the version this OpenProgram reads`,
    );
  }
  const calls: RecordedCall[] = [];
  const ended = new Set<number>();
  for (const line of parsed.slice(1)) {
    if (line.type === "header") throw new RecordingFormatError(path, "a second header line");
    if (line.type === "request") {
      if (line.call_index !== calls.length) {
        throw new RecordingFormatError(path, `call ${line.call_index} begins where call ${calls.length} was expected`);
      }
      const { call_index: callIndex, model, provider, request } = line;
      calls.push({ callIndex, model, provider, request, events: [], times: { request: timeOf(line), events: [] } });
      continue;
    }
    const call = calls[line.call_index];
    if (!call || ended.has(line.call_index)) {
      throw new RecordingFormatError(path, `a ${line.type} line for call ${line.call_index}, which is not open`);
    }
    if (line.type === "event") {
      call.events.push(line.event);
      call.times.events.push(timeOf(line));
    } else if (line.event_count !== call.events.length) {
      throw new RecordingFormatError(
        path,
        `call ${line.call_index} ends with ${line.event_count} events but ${call.events.length} were recorded`,
      );
    } else ended.add(line.call_index);
  }
  const open = calls.find((call) => !ended.has(call.callIndex));
  if (open)
    throw new RecordingFormatError(path, `call ${open.callIndex} has no call_end (the recording was cut short)`);
  const provider = header.provider ?? calls[0]?.provider ?? null;
  return { path, provider, ...(header.max_retries !== undefined ? { maxRetries: header.max_retries } : {}), calls };
}

function timeOf(line: { timestamp?: unknown }): number | null {
  return typeof line.timestamp === "number" && Number.isFinite(line.timestamp) ? line.timestamp : null;
}

const LINE_TYPES = new Set(["header", "request", "event", "call_end"]);

function parseLine(path: string, line: string, number: number): RecordingLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new RecordingFormatError(path, `line ${number} is not JSON`);
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== "string" || !LINE_TYPES.has(type)) {
    throw new RecordingFormatError(path, `line ${number} has no known type (header, request, event, call_end)`);
  }
  return value as RecordingLine;
}

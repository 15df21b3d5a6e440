import { closeSync, openSync, readSync } from "node:fs";
import { InputTooLargeError, InvalidInputError } from "../errors.js";

/** What a program's input, an answers file or a token file may weigh unless configured otherwise: 8 MiB. */
export const DEFAULT_MAX_INPUT_BYTES = 8 * 1024 * 1024;

/** Options of `readTextFileCapped`. */
export interface ReadCappedOptions {
  /** Read at most this many bytes; more is an InputTooLargeError. */
  maxBytes: number;
  /** How errors name the source, e.g. `--input-file /tmp/in.json`. */
  label: string;
  /** Says how to raise the limit, appended to the error (e.g. the variable that sets it). */
  limitHint?: string;
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Reads a UTF-8 text file (or a file descriptor, e.g. 0 for stdin), failing
 * as soon as it passes `maxBytes`: `/dev/zero` or an endless pipe costs at
 * most `maxBytes` of memory and stops, instead of growing until the process
 * dies. A file that cannot be read is an InvalidInputError naming it.
 */
export function readTextFileCapped(source: string | number, options: ReadCappedOptions): string {
  let fd: number;
  try {
    fd = typeof source === "number" ? source : openSync(source, "r");
  } catch (error) {
    throw new InvalidInputError(`Cannot read ${options.label}: ${errorCode(error)}.`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, options.maxBytes + 1 - total));
      const read = readRetryingAgain(fd, chunk, options.label);
      if (read === 0) break;
      total += read;
      if (total > options.maxBytes) {
        throw new InputTooLargeError(
          `${options.label} is larger than ${describeBytes(options.maxBytes)}, the most that is read${options.limitHint ? ` (${options.limitHint})` : ""}; pass a smaller file.`,
        );
      }
      chunks.push(chunk.subarray(0, read));
    }
  } finally {
    if (typeof source !== "number") closeSync(fd);
  }
  return Buffer.concat(chunks, total).toString("utf8");
}

/** A non-blocking descriptor (a pipe some shells hand over) says EAGAIN until data comes: wait briefly and retry. */
function readRetryingAgain(fd: number, buffer: Buffer, label: string): number {
  for (;;) {
    try {
      return readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (code === "EOF") return 0;
      throw new InvalidInputError(`Cannot read ${label}: ${errorCode(error)}.`);
    }
  }
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/** Bytes as a short size: "8 MiB", "512 KiB", "100 bytes". */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

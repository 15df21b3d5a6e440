import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import { readTextFileCapped } from "@openprogram/session-context/host";
import { assertUsableToken } from "./options.js";

/** The file under the OpenProgram home that keeps the token `serve` generated, so it is the same on every start. */
export const SERVE_TOKEN_FILE = "serve-token";

/** A token file holds one token and a newline; anything larger is not a token file. */
const MAX_TOKEN_FILE_BYTES = 4096;

/**
 * Reads a token from a file (`--token-file`, `OPENPROGRAM_TOKEN_FILE`):
 * its content without the trailing newline. `from` names where the path came
 * from in errors.
 */
export function readTokenFile(path: string, from: string): string {
  const text = readTextFileCapped(path, { maxBytes: MAX_TOKEN_FILE_BYTES, label: `${from} ${path}` });
  const token = text.replace(/\r?\n$/, "");
  assertUsableToken(token, `The token in ${from} ${path}`);
  return token;
}

/**
 * The token `serve` uses when none is given: read from
 * `<home>/serve-token`, or generated (24 random bytes, hex) and stored there
 * with mode 0600 on first use. Several servers starting at once agree on one
 * token (the file is created whole, once). A stored file that other users
 * could read, or that belongs to another user, is refused: it would not keep
 * the token secret.
 */
export function loadOrCreateServeToken(home: string): { token: string; path: string } {
  const path = join(home, SERVE_TOKEN_FILE);
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new InvalidInputError(
      `Cannot create ${dirname(path)} to keep the generated token: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Pass --token-file, set OPENPROGRAM_TOKEN, or --no-token on a single-user machine.`,
    );
  }
  createOnce(path, `${randomBytes(24).toString("hex")}\n`);
  assertPrivate(path);
  return { token: readTokenFile(path, "the stored token file"), path };
}

/** Creates `path` with `content` unless it exists: written to a temp file first, then linked into place whole. */
function createOnce(path: string, content: string): void {
  const temporary = `${path}.tmp-${randomBytes(6).toString("hex")}`;
  try {
    const fd = openSync(temporary, "wx", 0o600);
    try {
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  } catch (error) {
    throw new InvalidInputError(
      `Cannot store the generated token in ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Pass --token-file, set OPENPROGRAM_TOKEN, or --no-token on a single-user machine.`,
    );
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // never created
    }
  }
}

function assertPrivate(path: string): void {
  const stats = statSync(path);
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new InvalidInputError(
      `${path} belongs to another user (uid ${stats.uid}), so its token is not yours to trust; delete it to have a new token generated.`,
    );
  }
  if ((stats.mode & 0o077) !== 0) {
    throw new InvalidInputError(
      `${path} can be read by other users (mode ${(stats.mode & 0o777).toString(8)}); run \`chmod 600 ${path}\`, or delete it to have a new token generated.`,
    );
  }
}

import { resolve } from "node:path";
import { Writable } from "node:stream";
import type { Asker } from "@openprogram/session-context";
import { createScriptedAsker, createTerminalAsker, readAnswersFile } from "@openprogram/session-context/host";
import { inputLimit } from "./input-limit.js";
import { isTerminal, type CliIo } from "./io.js";

/**
 * How askUser reaches a human from the command line: `--answers F` answers
 * from the file in order (read within OPENPROGRAM_MAX_INPUT_BYTES); otherwise a terminal prompt when stdin is a
 * terminal; otherwise nobody (null), so a question fails with
 * AskUserUnavailableError and is recorded, instead of hanging on a closed stdin.
 */
export function chooseAsker(io: CliIo, answersFile: string | undefined): Asker | null {
  if (answersFile !== undefined) {
    const path = resolve(io.cwd, answersFile);
    return createScriptedAsker(readAnswersFile(path, inputLimit(io.env)), `the answers file ${path}`);
  }
  if (isTerminal(io.stdin)) return createTerminalAsker({ input: io.stdin, output: cookedOutput(io.stderr) });
  return null;
}

/**
 * stderr without its `isTTY` flag. Given a terminal, readline switches the
 * terminal to raw mode and turns Ctrl-C into "end of input", so a question
 * would be recorded as declined instead of the turn being cancelled. In the
 * terminal's own (cooked) mode Ctrl-C stays a SIGINT, which cancels the turn
 * like anywhere else; the terminal still echoes and edits the line.
 */
export function cookedOutput(stderr: NodeJS.WritableStream): NodeJS.WritableStream {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      stderr.write(chunk, (error) => done(error ?? null));
    },
  });
}

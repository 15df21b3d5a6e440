/** A stream that may be a terminal. */
export type MaybeTty<T> = T & { isTTY?: boolean };

/** The streams and environment a command talks through (the process's, unless a test gives others). */
export interface CliIo {
  stdin: MaybeTty<NodeJS.ReadableStream>;
  stdout: MaybeTty<NodeJS.WritableStream>;
  stderr: MaybeTty<NodeJS.WritableStream>;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** The real process's streams, environment and working directory. */
export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** True when the stream is an interactive terminal. */
export function isTerminal(stream: { isTTY?: boolean }): boolean {
  return stream.isTTY === true;
}

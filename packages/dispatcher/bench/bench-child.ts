// A benchmark's server runs in a child process of its own, so its CPU time and RSS are its
// alone. The child prints `{"port": N}` on its first stdout line once it listens, then answers
// IPC requests one at a time; `{ cmd: "exit" }` ends it.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** A running benchmark server child. */
export interface BenchChild<Request> {
  port: number;
  /** The child's process id (for strace, perf). */
  pid: number;
  /** Sends one request and resolves with the child's next IPC message. */
  ask<T>(request: Request): Promise<T>;
  /** Asks the child to exit and waits until it has. */
  stop(): Promise<void>;
}

/** Starts `script` (a .ts file beside the bench, run through tsx) with `args`, once it listens. */
export async function startBenchChild<Request extends object>(
  script: string,
  args: readonly string[],
): Promise<BenchChild<Request>> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", resolve);
    child.once("exit", (code) =>
      reject(new Error(`${script} ${args.join(" ")} exited with ${String(code)} before listening`)),
    );
  });
  return {
    port: (JSON.parse(first) as { port: number }).port,
    pid: child.pid ?? 0,
    ask: <T>(request: Request) =>
      new Promise<T>((resolve) => {
        child.once("message", (message) => resolve(message as T));
        child.send(request);
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.send({ cmd: "exit" });
      }),
  };
}

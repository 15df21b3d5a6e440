// `openprogram serve` in a child process, as tests of the server and of the cluster start it: on a
// free port, resolved once it answers /healthz, with its start banner and page address parsed.
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { waitFor } from "@openprogram/session-context/testing";
import { collect, spawnCli, type CliResult, type RunCliOptions } from "./run-cli.js";

/** One line the server logged on stdout (JSON lines). */
export type ServeLogLine = Record<string, unknown>;

/** A running `openprogram serve`. */
export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves when the server has exited; `output()` is what it printed so far. */
  run: ReturnType<typeof collect>;
  port: number;
  /** The `start` banner. */
  start: ServeLogLine;
  /** The WebSocket address, with the page's token when the server printed one. */
  wsUrl: string;
  /** Every JSON line logged so far. */
  lines: () => ServeLogLine[];
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop: (signal?: NodeJS.Signals) => Promise<CliResult>;
}

/** Starts `openprogram serve --port 0 ...args` and waits until it serves. */
export async function startServe(args: readonly string[], options: RunCliOptions): Promise<ServeProcess> {
  const child = spawnCli(["serve", "--port", "0", ...args], options);
  const run = collect(child, options.timeoutMs);
  const lines = (): ServeLogLine[] =>
    run
      .output()
      .stdout.split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as ServeLogLine);
  const banner = (): ServeLogLine | undefined => lines().find((line) => line.event === "start");
  await waitFor(() => banner() !== undefined || child.exitCode !== null, "openprogram serve to start");
  const start = banner();
  if (!start) throw new Error(`openprogram serve did not start:\n${run.output().stderr}`);
  const port = Number(start.port);
  // The page line (with a generated token) is printed right after the banner; once /healthz
  // answers, everything the start printed is in.
  await waitFor(
    () =>
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        (answer) => answer.ok,
        () => false,
      ),
    "openprogram serve to answer /healthz",
  );
  const page = lines().find((line) => line.event === "page");
  const token = page ? new URL(String(page.url)).searchParams.get("token") : null;
  return {
    child,
    run,
    port,
    start,
    wsUrl: token === null ? String(start.ws_url) : `${String(start.ws_url)}?token=${encodeURIComponent(token)}`,
    lines,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return run;
    },
  };
}

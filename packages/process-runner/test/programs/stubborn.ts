// Ignores cancellation and starts a grandchild that ignores SIGTERM: only SIGKILL of the whole group ends them.
import { spawn } from "node:child_process";
import { agenticFunction } from "@openprogram/session-context";

const IGNORE_SIGTERM = "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);";

/** Starts the grandchild; its pid is this call's output (the parent sees it in the update event). */
export const startGrandchild = agenticFunction(
  { name: "start_grandchild", doc: "Start a helper process." },
  async () => {
    const grandchild = spawn(process.execPath, ["-e", IGNORE_SIGTERM], { stdio: "ignore" });
    await new Promise<void>((resolve, reject) => {
      grandchild.once("spawn", resolve);
      grandchild.once("error", reject);
    });
    return { pid: grandchild.pid };
  },
);

/** Starts the grandchild, then waits forever whatever its signal says. */
export const stubborn = agenticFunction({ name: "stubborn", doc: "Never stop." }, async () => {
  process.on("SIGTERM", () => undefined);
  await startGrandchild({});
  await new Promise(() => setInterval(() => undefined, 1000));
});

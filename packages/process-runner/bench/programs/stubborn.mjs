// Ignores cancellation and keeps a grandchild in its process group: only SIGKILL of the group ends it.
import { spawn } from "node:child_process";
import process from "node:process";
import { setInterval } from "node:timers";
import { agenticFunction } from "@openprogram/session-context";

export default agenticFunction({ name: "stubborn", doc: "Never stop." }, async () => {
  spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);"], { stdio: "ignore" });
  await new Promise(() => setInterval(() => undefined, 1000));
});

// Profiles the bench server (not a benchmark: no figures are judged here). Starts bench/server-child.ts in
// dispatcher mode, drives a warm-up, then one round of 50 clients x 20 chat turns ("continued") or 50 clients x 20
// new sessions ("new") under the inspector's CPU profiler, and writes the round's profile to <file> (open it in
// Chrome's DevTools). Prints the server's CPU per turn.
// Usage: tsx bench/profile-server.ts continued|new <file> [clients (default 50)]
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runChatClient } from "./chat-client.js";

const [round = "continued", output = "server.cpuprofile", clients = "50"] = process.argv.slice(2);
const CLIENTS = Number(clients);
const TURNS = 20;
const CHILD = fileURLToPath(new URL("./server-child.ts", import.meta.url));

// OPENPROGRAM_PROFILE_STRACE=<file>: the server also runs under `strace -f -c` (system calls counted, with its
// start-up and warm-up; compare two builds on the same round).
const straceTo = process.env.OPENPROGRAM_PROFILE_STRACE;
const server = [process.execPath, "--import", "tsx", CHILD, "dispatcher", "5000"];
const command = straceTo ? ["strace", "-f", "-c", "-o", straceTo, ...server] : server;
const child = spawn(command[0] as string, command.slice(1), {
  cwd: fileURLToPath(new URL("..", import.meta.url)),
  stdio: ["ignore", "pipe", "inherit", "ipc"],
});
const first = await new Promise<string>((resolve) =>
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", resolve),
);
const { port } = JSON.parse(first) as { port: number };
const ask = <T>(request: object): Promise<T> =>
  new Promise((resolve) => {
    child.once("message", (message) => resolve(message as T));
    child.send(request);
  });

await runChatClient(port, 10, { newSessions: round === "new" });
await ask({ cmd: "profile-start" });
const before = (await ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs;
const began = performance.now();
await Promise.all(Array.from({ length: CLIENTS }, () => runChatClient(port, TURNS, { newSessions: round === "new" })));
const wall = performance.now() - began;
const after = (await ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs;
await ask({ cmd: "profile-stop", path: resolve(output) });
const turns = CLIENTS * TURNS;
process.stdout.write(
  `${round}: ${turns} turns, server CPU ${((after - before) / turns).toFixed(2)} ms/turn, ` +
    `${(turns / (wall / 1000)).toFixed(1)} turns/s (not a timing: the machine is shared)\n`,
);
await new Promise<void>((resolve) => {
  child.once("exit", () => resolve());
  child.send({ cmd: "exit" });
});

// What one chat turn asks of the kernel: the server child (dispatcher or floor) is warmed up with 10 turns, then
// strace follows every thread of it through `turns` chat turns of one client (a continued session, or a new session
// per turn), and the calls on files are counted by kind and by the file's name within the session, per turn.
// Not a speed figure (strace slows every call): a list of what a turn writes, flushes and renames.
// Usage: tsx bench/syscalls.ts [dispatcher|floor (default dispatcher)] [continued|new (default continued)]
//        [turns (default 20)] [--raw <path>] [--root <checkout>]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startBenchChild } from "./bench-child.js";
import { runChatClient } from "./chat-client.js";
import type { ChildRequest } from "./server-child.js";

// --raw <path>: keep strace's output there; --root <checkout>: that checkout's server child (main's, say).
const flags = new Map<string, string>();
const positional: string[] = [];
for (let index = 2; index < process.argv.length; index++) {
  const argument = process.argv[index] as string;
  if (argument.startsWith("--")) flags.set(argument, process.argv[++index] ?? "");
  else positional.push(argument);
}
const keepRaw = flags.get("--raw");
const [mode = "dispatcher", kind = "continued", turnsArgument = "20"] = positional;
const TURNS = Number(turnsArgument);
const root = flags.get("--root");
const CHILD = root
  ? join(resolve(root), "packages/dispatcher/bench/server-child.ts")
  : fileURLToPath(new URL("./server-child.ts", import.meta.url));

const server = await startBenchChild<ChildRequest>(CHILD, [mode, String(TURNS + 100)]);
const { pid } = server;
const newSessions = kind === "new";
await runChatClient(server.port, 10, { newSessions });
const scratch = mkdtempSync(join(tmpdir(), "openprogram-syscalls-"));
const out = keepRaw ?? join(scratch, "trace");
const strace = spawn(
  "strace",
  ["-f", "-y", "-qq", "-e", "trace=%file,%desc,fsync,fdatasync,sync_file_range", "-o", out, "-p", String(pid)],
  { stdio: ["ignore", "ignore", "pipe"] },
);
// strace reports nothing once attached; its first lines arrive with the first calls. Give it time to attach.
await new Promise((done) => setTimeout(done, 1500));
await runChatClient(server.port, TURNS, { newSessions });
strace.kill("SIGINT");
await new Promise((done) => strace.once("exit", done));
await server.stop();

/** Counts of call kinds, and of (kind, file) pairs with session-specific parts of the name folded. */
const byCall = new Map<string, number>();
const byFile = new Map<string, number>();
const bump = (map: Map<string, number>, key: string): void => void map.set(key, (map.get(key) ?? 0) + 1);
const fold = (path: string): string =>
  path
    .replace(/^.*openprogram-bench-[^/]+(\/sessions)?/, "<store>")
    .replace(/session_[0-9a-f]+/g, "<s>")
    .replace(/\/objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/, "/objects/xx/<object>")
    .replace(/\/objects\/[0-9a-f]{2}\/tmp_obj_\w+$/, "/objects/xx/tmp_obj_<tmp>")
    .replace(/\/objects\/[0-9a-f]{2}$/, "/objects/xx")
    .replace(/\/objects\/pack\/tmp_(pack|idx)_\w+$/, "/objects/pack/tmp_$1_<tmp>")
    .replace(/\/objects\/pack\/pack-[0-9a-f]{40}\./, "/objects/pack/pack-<sha>.")
    .replace(/history\/\.?\d+-u-[0-9a-f]+\.json/, "history/<user node>.json")
    .replace(/history\/\.?\d+-l-[0-9a-f]+\.json/, "history/<reply node>.json")
    .replace(/history\/\.?\d+-\w-[0-9a-f]+\.json/, "history/<node>.json")
    .replace(/\.tmp-[0-9a-f]+$/, ".tmp-<tmp>")
    .replace(/\.[0-9a-f]{8}\.tmp$/, ".<tmp>.tmp")
    .replace(/turn_[0-9a-f]+\.lease$/, "<turn>.lease")
    .replace(/-[0-9a-f]{8}(\/|$)/, "-<tmp>$1");
for (const line of readFileSync(out, "utf8").split("\n")) {
  const match = /^\d+\s+(\w+)\((.*)$/.exec(line);
  if (!match) continue;
  const [, call, rest] = match as unknown as [string, string, string];
  if (/^(epoll_|futex|getpid|io_uring)/.test(call)) continue;
  const paths = [...rest.matchAll(/"([^"]*)"|<([^>]*)>/g)].map((found) => found[1] ?? found[2] ?? "");
  const path = paths.find((candidate) => candidate.includes("openprogram-bench-"));
  if (!path) continue; // sockets, pipes, the tsx cache, node's own files: not the turn's storage
  // A file made (not only opened) is what costs most here: a new inode, and a name in a folder.
  const kind = call === "openat" && rest.includes("O_CREAT") ? "openat(O_CREAT)" : call;
  bump(byCall, kind);
  bump(byFile, `${kind} ${fold(path)}`);
}
const perTurn = (count: number): string => (count / TURNS).toFixed(2).padStart(7);
const sorted = (map: Map<string, number>): Array<[string, number]> => [...map].sort((a, b) => b[1] - a[1]);
const total = [...byCall.values()].reduce((sum, count) => sum + count, 0);
process.stdout.write(
  `${mode}, ${kind} sessions, ${TURNS} turns: ${(total / TURNS).toFixed(1)} calls on the store per turn\n`,
);
for (const [call, count] of sorted(byCall)) process.stdout.write(`${perTurn(count)}  ${call}\n`);
process.stdout.write(`by file:\n`);
for (const [key, count] of sorted(byFile)) process.stdout.write(`${perTurn(count)}  ${key}\n`);
rmSync(scratch, { recursive: true, force: true });

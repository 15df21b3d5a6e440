// A hostile store, through the real entries (issue 13 items 1-3, 9, 10, 13): the `openprogram`
// binary and a dispatcher on loopback, doing what the probe did. Session ids that name the
// store's files, a file and a folder named like a session, links inside the root, a damaged
// .git inside a checkout with uncommitted edits, a corrupt meta.json. Each must be refused with
// its code and leave everything it did not create exactly as it was.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createDispatcher, type ServedProgram } from "@openprogram/dispatcher";
import { isAgenticFunction } from "@openprogram/session-context";
import { SessionDB } from "@openprogram/session-context/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";

const CLI_BIN = fileURLToPath(new URL("../../../packages/cli/dist/bin.js", import.meta.url));
const PROGRAM_FILE = fileURLToPath(new URL("../programs/echo.mjs", import.meta.url));
const PROGRAM = `${PROGRAM_FILE}#echo`;

let work: string;
let home: string;
let root: string;
let outside: string;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), "openprogram-hostile-"));
  home = join(work, "home");
  root = join(home, "sessions");
  outside = join(work, "outside");
  mkdirSync(outside, { recursive: true });
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], openProgramHome = home): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: work,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: openProgramHome, OPENPROGRAM_HOME: openProgramHome },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 60_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every entry below `dir` (links not followed): type and content or target. The session lock is a transient lease file. */
function snapshot(dir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (current: string): void => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const key = relative(dir, path);
      if (key.endsWith(join(".state", "lock"))) continue;
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) entries[key] = `link -> ${readlinkSync(path)}`;
      else if (stat.isDirectory()) {
        entries[key] = "dir";
        walk(path);
      } else entries[key] = `file ${readFileSync(path, "base64")}`;
    }
  };
  walk(dir);
  return entries;
}

const git = (dir: string, ...args: string[]): string => execFileSync("git", args, { cwd: dir, encoding: "utf8" });

describe("the probe's repro through the CLI: ids that name the store's files, a file and a folder named like a session", () => {
  it("refuses each with its code and exit 2, and changes nothing it did not create", async () => {
    expect((await runCli(["run", PROGRAM, "--input", '{"text":"kept"}', "--session", "a"])).code).toBe(0);
    const kept = new SessionDB({ root });
    await kept.updateSession("a", { title: "Kept title", pinned: true, archived: true });
    await kept.flushRegistry(); // the coalesced index.json write lands before the snapshot, not between two
    writeFileSync(join(root, "notes.txt"), "keep\n");
    writeFileSync(join(root, "index.json.corrupt-1700000000000"), "an old registry\n");
    mkdirSync(join(root, "mydir", "sub"), { recursive: true });
    writeFileSync(join(root, "mydir", "notes.md"), "mine\n");
    writeFileSync(join(outside, "precious.txt"), "outside\n");
    symlinkSync(outside, join(root, "linked"));
    const before = snapshot(root);
    const outsideBefore = snapshot(outside);

    const cases: Array<[string, string]> = [
      ["notes.txt", "not_a_session"],
      ["mydir", "not_a_session"],
      ["linked", "unsafe_session_path"],
      ["index.json", "invalid_session_id"],
      ["INDEX.JSON", "invalid_session_id"],
      ["index.json.corrupt-1700000000000", "invalid_session_id"],
      ["-x", "invalid_session_id"],
      ["--help", "invalid_session_id"],
      [".hidden", "invalid_session_id"],
    ];
    for (const [sessionId, code] of cases) {
      for (const args of [
        ["run", PROGRAM, "--input", '{"text":"x"}', `--session=${sessionId}`],
        ["run", PROGRAM, "--json", `--session=${sessionId}`],
      ]) {
        const result = await runCli(args);
        expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(2);
        expect(result.stderr, args.join(" ")).toContain(`error [${code}]`);
        if (args.includes("--json"))
          expect((JSON.parse(result.stdout) as { error: { code: string } }).error.code).toBe(code);
        expect(snapshot(root), `${args.join(" ")} changed the store`).toEqual(before);
      }
      if (code !== "invalid_session_id") {
        expect(snapshot(root)[sessionId], "the message names a path that is there").toBeDefined();
        const removal = await runCli(["sessions", "rm", sessionId, "--yes"]);
        expect(removal.code, removal.stderr).toBe(2);
        expect(snapshot(root)).toEqual(before);
      }
    }
    expect(snapshot(outside)).toEqual(outsideBefore);
    const listed = JSON.parse((await runCli(["sessions", "list", "--all", "--json"])).stdout) as Array<
      Record<string, unknown>
    >;
    expect(listed.map(({ id, title, pinned, archived }) => ({ id, title, pinned, archived }))).toEqual([
      { id: "a", title: "Kept title", pinned: true, archived: true },
    ]);
  });
});

describe("a damaged .git inside a checkout with uncommitted edits", () => {
  it("fails the turn with git_failed, commits nothing to the checkout, and the doctor reports every session", async () => {
    const checkout = join(work, "checkout");
    mkdirSync(checkout);
    git(checkout, "init", "-q", "--initial-branch=main");
    git(checkout, "config", "user.email", "me@example.com");
    git(checkout, "config", "user.name", "Me");
    writeFileSync(join(checkout, "tracked.txt"), "one\n");
    git(checkout, "add", ".");
    git(checkout, "commit", "-q", "-m", "mine");
    writeFileSync(join(checkout, "tracked.txt"), "an uncommitted edit\n");
    writeFileSync(join(checkout, "untracked.txt"), "new\n");
    // Like the demo's .demo/home: the OpenProgram home inside the user's checkout.
    const demoHome = join(checkout, ".demo", "home");
    const demoRoot = join(demoHome, "sessions");
    const state = (): string[] => [
      git(checkout, "log", "--all", "--format=%H %s"),
      git(checkout, "status", "--porcelain", "--untracked-files=all", "--", ".", ":(exclude).demo"),
      readFileSync(join(checkout, ".git", "index"), "base64"),
    ];
    for (const id of ["garbled", "emptied", "healthy"])
      expect((await runCli(["run", PROGRAM, "--input", `{"text":"${id}"}`, "--session", id], demoHome)).code).toBe(0);
    writeFileSync(join(demoRoot, "garbled", ".git", "HEAD"), "garbage\n");
    rmSync(join(demoRoot, "emptied", ".git"), { recursive: true });
    mkdirSync(join(demoRoot, "emptied", ".git"));
    const before = state();

    for (const id of ["garbled", "emptied"]) {
      const result = await runCli(["run", PROGRAM, "--input", '{"text":"again"}', "--session", id], demoHome);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain("error [git_failed]");
      expect(result.stderr).toContain(`session '${id}'`);
      expect(result.stderr).toContain(`openprogram sessions doctor ${id}`);
      expect(state()).toEqual(before);
    }

    const doctor = await runCli(["sessions", "doctor", "--json"], demoHome);
    expect(doctor.code).toBe(1);
    const report = JSON.parse(doctor.stdout) as { sessionsChecked: number; findings: Array<Record<string, unknown>> };
    expect(report.sessionsChecked).toBe(3);
    const damaged = report.findings.filter((finding) => finding.kind === "git_damaged").map((f) => f.sessionId);
    expect(damaged.sort()).toEqual(["emptied", "garbled"]);
    expect(state()).toEqual(before);
  });
});

describe("links inside the sessions root", () => {
  it("refuses a linked session folder and a linked history/, writing nothing outside the root", async () => {
    for (const id of ["s", "h"])
      expect((await runCli(["run", PROGRAM, "--input", '{"text":"one"}', "--session", id])).code).toBe(0);
    cpSync(join(root, "s"), join(outside, "s"), { recursive: true });
    rmSync(join(root, "s"), { recursive: true });
    symlinkSync(join(outside, "s"), join(root, "s"));
    cpSync(join(root, "h", "history"), join(outside, "history"), { recursive: true });
    rmSync(join(root, "h", "history"), { recursive: true });
    symlinkSync(join(outside, "history"), join(root, "h", "history"));
    const outsideBefore = snapshot(outside);
    for (const [id, linked] of [
      ["s", join(root, "s")],
      ["h", join(root, "h", "history")],
    ] as const) {
      const result = await runCli(["run", PROGRAM, "--input", '{"text":"two"}', "--session", id]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain("error [unsafe_session_path]");
      expect(result.stderr).toContain(`${linked} is a symbolic link`);
    }
    expect(snapshot(outside)).toEqual(outsideBefore);
  });
});

describe("a corrupt meta.json, through every entry", () => {
  it("is corrupt_meta naming the file on the CLI and on the web, listed as damaged, never rewritten", async () => {
    expect((await runCli(["run", PROGRAM, "--input", '{"text":"one"}', "--session", "c"])).code).toBe(0);
    const meta = join(root, "c", "meta.json");
    writeFileSync(meta, '["x"]');
    const damaged = snapshot(join(root, "c"));

    for (const args of [
      ["run", PROGRAM, "--input", '{"text":"two"}', "--session", "c"],
      ["run", PROGRAM, "--resume", "c"],
      ["sessions", "show", "c"],
      ["sessions", "export", "c"],
    ]) {
      const result = await runCli(args);
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(2);
      expect(result.stderr, args.join(" ")).toContain("error [corrupt_meta]");
      expect(result.stderr, args.join(" ")).toContain(meta);
      expect(result.stderr, args.join(" ")).toContain("openprogram sessions doctor c --fix");
      expect(result.stderr, args.join(" ")).not.toMatch(/SyntaxError|TypeError/);
    }
    const list = await runCli(["sessions", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^c\s+damaged\s/m);

    const token = randomBytes(16).toString("hex");
    const echo = (await import(PROGRAM_FILE)) as { echo: unknown };
    expect(isAgenticFunction(echo.echo)).toBe(true);
    const dispatcher = await createDispatcher({
      port: 0,
      token,
      runtime: null,
      db: new SessionDB({ root }),
      programs: { echo: echo.echo as ServedProgram },
    });
    try {
      for (const frame of [
        { type: "run", program: "echo", session_id: "c", input: { text: "web" } },
        { type: "get_session", session_id: "c" },
      ]) {
        const answer = await exchange(dispatcher.wsUrl, token, frame);
        expect(answer.type, JSON.stringify(answer)).toBe("error");
        expect(answer.code).toBe("corrupt_meta");
        expect(answer.message).toContain(meta);
      }
    } finally {
      await dispatcher.close();
    }
    expect(snapshot(join(root, "c"))).toEqual(damaged);
  });
});

describe("the probe's WebSocket frames", () => {
  it("refuses session ids that name the store's files, a file, a folder or a link, and leaves them as they were", async () => {
    mkdirSync(root, { recursive: true });
    const db = new SessionDB({ root });
    await db.createSession({ id: "a", title: "Kept" });
    await db.updateSession("a", { pinned: true });
    await db.flushRegistry(); // the coalesced index.json write lands before the snapshot, not between two
    writeFileSync(join(root, "notes.txt"), "keep\n");
    mkdirSync(join(root, "mydir"));
    writeFileSync(join(root, "mydir", "mine.txt"), "mine\n");
    symlinkSync(outside, join(root, "linked"));
    const before = snapshot(root);
    const token = randomBytes(16).toString("hex");
    const echo = (await import(PROGRAM_FILE)) as { echo: ServedProgram };
    const dispatcher = await createDispatcher({ port: 0, token, runtime: null, db, programs: { echo: echo.echo } });
    try {
      const cases: Array<[string, string]> = [
        ["index.json", "invalid_session_id"],
        ["index.json.corrupt-1", "invalid_session_id"],
        ["-rf", "invalid_session_id"],
        ["notes.txt", "not_a_session"],
        ["mydir", "not_a_session"],
        ["linked", "unsafe_session_path"],
      ];
      for (const [sessionId, code] of cases) {
        const answer = await exchange(dispatcher.wsUrl, token, { type: "run", program: "echo", session_id: sessionId });
        expect(answer.type, JSON.stringify(answer)).toBe("error");
        expect(answer.code, JSON.stringify(answer)).toBe(code);
        expect(snapshot(root)).toEqual(before);
      }
      const deleted = await exchange(dispatcher.wsUrl, token, { type: "delete_session", session_id: "mydir" });
      expect(deleted.type).toBe("error");
      expect(snapshot(root)).toEqual(before);
    } finally {
      await dispatcher.close();
    }
  });
});

/** Connects, sends one frame and resolves with the first frame that answers it (anything but hello/status/subscribed). */
function exchange(
  wsUrl: string,
  token: string,
  frame: Record<string, unknown>,
): Promise<{ type: string; code?: string; message?: string }> {
  return new Promise((resolve, reject) => {
    const origin = new URL(wsUrl.replace(/^ws/, "http")).origin;
    const socket = new WebSocket(`${wsUrl}?token=${token}`, { headers: { origin } });
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`no answer to ${JSON.stringify(frame)}`));
    }, 30_000);
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on("message", (data: Buffer) => {
      const answer = JSON.parse(data.toString()) as { type: string; code?: string; message?: string };
      if (answer.type === "hello") {
        socket.send(JSON.stringify(frame));
        return;
      }
      if (["status", "subscribed", "sessions_changed"].includes(answer.type)) return;
      clearTimeout(timer);
      socket.terminate();
      resolve(answer);
    });
  });
}

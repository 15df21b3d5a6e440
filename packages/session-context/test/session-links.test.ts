// Issue 30, item 2: no write, chmod or rename inside a session follows a symbolic link. A link planted at each file
// or folder a turn writes (`.git` included) points at a file outside the root; the turn is refused with
// unsafe_session_path, the doctor reports the link, and the target keeps its content and its mode.
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctorSessions, gcSessions } from "../src/entries/store.js";
import { createTempStore, PYTHON_SESSIONS_FIXTURE, type TempStore } from "../src/testing/index.js";
import { chatTurn } from "./helpers.js";

/** Where a link is planted, relative to the session; folders are replaced by a link to a folder outside. */
const FILE_POSITIONS = [
  ".git/COMMIT_EDITMSG",
  ".git/info/exclude",
  ".git/index",
  ".git/HEAD",
  ".git/refs/heads/main",
  ".git/config",
  "meta.json",
];
/** Written by git only (the in-process writer keeps no reflog): a turn may commit, git is then never run. */
const GIT_ONLY_POSITIONS = [".git/logs/HEAD", ".git/packed-refs", ".git/ORIG_HEAD"];
const FOLDER_POSITIONS = [".git/objects/pack", ".git/refs/heads", ".git/info", ".git/objects"];

let store: TempStore;
let outside: string;
beforeEach(() => {
  // Sessions the Python store wrote: the first turn of ours adds our exclusions and makes COMMIT_EDITMSG private.
  store = createTempStore("openprogram-links-", { from: PYTHON_SESSIONS_FIXTURE });
  outside = join(store.home, "outside");
  mkdirSync(outside);
});
afterEach(() => store.cleanup());

const SESSION = "chat_shared";

/** Replaces `position` by a link to a copy outside the root (mode 0644), and returns the copy. */
function plantLink(position: string): string {
  const path = join(store.root, SESSION, position);
  const target = join(outside, position.replaceAll("/", "_"));
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory()) {
    mkdirSync(target);
    writeFileSync(join(target, "precious"), "precious\n");
  } else {
    writeFileSync(target, stat ? readFileSync(path) : "precious\n");
    chmodSync(target, 0o644);
  }
  rmSync(path, { recursive: true, force: true });
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
  return target;
}

/** Content and mode of a file, or of every file in a folder (and the folder's names). */
function snapshot(target: string): string {
  const stat = statSync(target);
  if (!stat.isDirectory()) return `${(stat.mode & 0o777).toString(8)} ${readFileSync(target, "base64")}`;
  return readdirSync(target)
    .map((name) => `${name} ${snapshot(join(target, name))}`)
    .join("\n");
}

async function attemptTurn(): Promise<{ code?: string; message: string } | null> {
  try {
    await chatTurn(store.db, SESSION, "turn_links");
    return null;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

describe("a symbolic link where a turn writes", () => {
  it.each([...FILE_POSITIONS, ...FOLDER_POSITIONS])("%s: refused, reported, the target untouched", async (position) => {
    const target = plantLink(position);
    const before = snapshot(target);
    const failure = await attemptTurn();
    expect(failure?.code, failure?.message).toBe("unsafe_session_path");
    expect(snapshot(target)).toBe(before);
    const report = await doctorSessions({ db: store.db, sessionId: SESSION });
    const unsafe = report.findings.filter((finding) => finding.kind === "unsafe_path");
    expect(unsafe.map((finding) => finding.path)).toContain(join(store.root, SESSION, position));
    await doctorSessions({ db: store.db, sessionId: SESSION, fix: true });
    expect(snapshot(target)).toBe(before);
  });

  it.each(GIT_ONLY_POSITIONS)("%s: git is not run, gc skips the session, the target untouched", async (position) => {
    const target = plantLink(position);
    const before = snapshot(target);
    const failure = await attemptTurn();
    expect(failure).toBeNull();
    const gc = await gcSessions({ db: store.db, sessionId: SESSION });
    expect(gc.sessions[0]?.skipped).toBe("unsafe_path");
    await expect(store.db.gitLog(SESSION)).rejects.toMatchObject({ code: "unsafe_session_path" });
    const report = await doctorSessions({ db: store.db, sessionId: SESSION, fix: true });
    expect(report.findings.map((finding) => [finding.kind, finding.path])).toContainEqual([
      "unsafe_path",
      join(store.root, SESSION, position),
    ]);
    expect(snapshot(target)).toBe(before);
  });

  it("a session without links takes the same turn (the refusals above are the links')", async () => {
    expect(await attemptTurn()).toBeNull();
  });
});

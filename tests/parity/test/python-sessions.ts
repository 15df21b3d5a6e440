// Python OpenProgram's side of the parity tests: the sessions it wrote (a fixture we start from),
// a model that summarises them, and its own rules reading back what we wrote
// (python/render_compacted.py, python/read_branches.py).
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SUMMARIZE_CONVERSATION_DOC } from "@openprogram/session-context/compaction";
import { removeTree, type FakeReplyHandler } from "@openprogram/session-context/testing";

/** Sessions Python OpenProgram wrote, compacted_shared and branched_shared among them: a tar.gz of `sessions/`. */
export const PYTHON_SESSIONS = fileURLToPath(
  new URL("../../../packages/session-context/test/fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url),
);
const RENDER_COMPACTED = fileURLToPath(new URL("../python/render_compacted.py", import.meta.url));
const READ_BRANCHES = fileURLToPath(new URL("../python/read_branches.py", import.meta.url));

/** Unpacks Python's sessions into `home` (created if missing); returns the sessions root, `home/sessions`. */
export function unpackPythonSessions(home: string): string {
  mkdirSync(home, { recursive: true });
  execFileSync("tar", ["xzf", PYTHON_SESSIONS, "-C", home]);
  return join(home, "sessions");
}

/** Whether python3 runs here: the tests that let Python read our files need it. */
export const hasPython: boolean = (() => {
  try {
    execFileSync("python3", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** A model that answers the summariser with `summary` and every other request with `reply`. */
export function summarisingModel(summary: string, reply: FakeReplyHandler): FakeReplyHandler {
  return (request, index) =>
    request.json.messages?.[0]?.content === SUMMARIZE_CONVERSATION_DOC ? summary : reply(request, index);
}

/** A compacted session as Python's rules render it: the active summary and the ids rendered, from `head` or meta's. */
export function renderCompactedWithPython(
  root: string,
  sessionId: string,
  head?: string,
): { active: string; rendered: string[] } {
  return JSON.parse(
    execFileSync("python3", [RENDER_COMPACTED, root, sessionId, ...(head ? [head] : [])], { encoding: "utf8" }),
  ) as { active: string; rendered: string[] };
}

/** Python's reading of a session's branches. */
export interface PythonBranches {
  /** Who answered: Python OpenProgram's own store (OPENPROGRAM_PYTHON_SRC), or its rules. */
  reader: string;
  head_id: string;
  branch: string[];
  tips: Array<[string, string | null]>;
  listed: string[];
  listed_all: string[];
  branches_meta: Record<string, Record<string, unknown>>;
}

/** Python's reading of a copy of the store (its store writes its index when it opens one, so never the original). */
export function readBranchesWithPython(root: string, sessionId: string): PythonBranches {
  const copy = join(mkdtempSync(join(tmpdir(), "openprogram-python-read-")), "sessions");
  cpSync(root, copy, { recursive: true });
  try {
    return JSON.parse(
      execFileSync("python3", [READ_BRANCHES, copy, sessionId], {
        encoding: "utf8",
        env: { ...process.env, HOME: copy },
      }),
    ) as PythonBranches;
  } finally {
    removeTree(join(copy, ".."));
  }
}

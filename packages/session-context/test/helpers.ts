import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { agenticFunction, type ExecOptions, type SessionDB } from "../src/index.js";

/** Runs a TypeScript file in a real child Node process (through tsx) and resolves with its output. */
export function runTsChild(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Path of a helper script in test/children/. */
export function childScript(name: string): string {
  return fileURLToPath(new URL(`./children/${name}`, import.meta.url));
}

/** git in a directory, output trimmed. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd: dir, encoding: "utf8" }).trim();
}

/** git with no user or system configuration, as a plain `git add -A && git commit` by the Python store runs it. */
export function plainGit(dir: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  }).trim();
}

/** One chat-like turn written through the store: `nodes` nodes at the head (user, llm, ...), then its end and commit. */
export async function chatTurn(db: SessionDB, sessionId: string, turnId: string, nodes = 4): Promise<string | null> {
  await db.beginTurn(sessionId, turnId);
  for (let index = 0; index < nodes; index++)
    await db.appendNode(
      sessionId,
      { role: index % 2 ? "llm" : "user", output: `${turnId} ${index} ünï` },
      { atHead: true },
    );
  return db.endTurn(sessionId, turnId, { status: "idle" });
}

/**
 * What git itself must say of a session's repository after our commits: a clean status, `git fsck --strict`, and the
 * tree `git add -A` would stage being the one committed.
 */
export function assertHealthy(dir: string): void {
  expect(plainGit(dir, "status", "--porcelain", "--untracked-files=all"), "git status is clean").toBe("");
  expect(() => plainGit(dir, "fsck", "--strict", "--no-dangling"), "git fsck passes").not.toThrow();
  // The tree we committed is the one git's own staging makes of the same files.
  plainGit(dir, "add", "-A");
  expect(plainGit(dir, "write-tree")).toBe(plainGit(dir, "rev-parse", "HEAD^{tree}"));
}

/** An agentic function with one exec ("Say hi") made with the options a test gives (retries, running nodes). */
export const askBriefly = agenticFunction(
  { name: "ask", doc: "Answer briefly." },
  async ({ options }: { options: ExecOptions }, { runtime }) => runtime.exec("Say hi", options),
);

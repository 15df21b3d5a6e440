import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The Python OpenProgram sessions fixture (two sessions: chat_shared, research_shared). */
export const PYTHON_FIXTURE = fileURLToPath(new URL("./fixtures/python-openprogram-sessions.tar.gz", import.meta.url));

/** Extracts the Python fixtures into a fresh temp dir; returns the sessions root. */
export function extractPythonFixtures(): { root: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "openprogram-fixture-"));
  execFileSync("tar", ["xzf", PYTHON_FIXTURE, "-C", dir]);
  return { root: join(dir, "sessions"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

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

import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

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

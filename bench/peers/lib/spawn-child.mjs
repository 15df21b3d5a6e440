// Starting workloads/child.mjs for one variant, optionally under strace or
// with extra node flags, and reading the JSON line it prints.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("../workloads/child.mjs", import.meta.url));

/** Starts the child; `done` resolves to { code, signal, result, stderr }. */
export function spawnChild({ variant, mode, options = {}, env, nodeFlags = [], wrapper = [], cwd }) {
  const command = wrapper.length > 0 ? wrapper[0] : process.execPath;
  const args = [
    ...wrapper.slice(1),
    ...(wrapper.length > 0 ? [process.execPath] : []),
    ...nodeFlags,
    CHILD,
    variant,
    mode,
    JSON.stringify(options),
  ];
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], cwd });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const done = new Promise((resolve) =>
    child.on("close", (code, signal) => {
      const line = stdout.trim().split("\n").filter(Boolean).pop();
      let result;
      try {
        result = line ? JSON.parse(line) : null;
      } catch {
        result = null; // not a JSON line: the child failed before printing its result
      }
      resolve({ code, signal, result, stderr });
    }),
  );
  return { child, done };
}

/** Runs the child to its end and returns its result, or throws with its stderr. */
export async function runChild(spec) {
  const { done } = spawnChild(spec);
  const outcome = await done;
  if (outcome.code !== 0 || !outcome.result) {
    throw new Error(
      `child ${spec.variant} ${spec.mode} exited ${outcome.code ?? outcome.signal}: ${outcome.stderr.slice(-2000)}`,
    );
  }
  return { ...outcome.result, stderr: outcome.stderr };
}

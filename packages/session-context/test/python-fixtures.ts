// What the two-way Python fixtures share (python-tool-calls and python-attachments, their tests and their
// make-fixtures.ts scripts): running a script with Python OpenProgram's code, and writing the committed files.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";

/** Runs a Python fixture script with Python OpenProgram's source at `source` ($OPENPROGRAM_PYTHON_SRC); its JSON output. */
export function runPythonScript<T>(script: string, source: string, args: string[]): T {
  const output = execFileSync("python3", [script, ...args], {
    encoding: "utf8",
    env: { ...process.env, OPENPROGRAM_PYTHON_SRC: source },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(output) as T;
}

/** For make-fixtures.ts: $OPENPROGRAM_PYTHON_SRC, or the process exits 2 saying what to set. */
export function pythonSourceOrExit(): string {
  const source = process.env.OPENPROGRAM_PYTHON_SRC;
  if (source) return source;
  console.error("Set OPENPROGRAM_PYTHON_SRC to a checkout of Python OpenProgram (the folder holding openprogram/).");
  process.exit(2);
}

/** A generated JSON fixture, as the committed ones are written (`.prettierignore` leaves them so). */
export function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** A tar.gz of `home`'s sessions/ folder, as createTempStore({ from }) extracts it (git's sample hooks left out). */
export function tarSessions(home: string, archive: string): void {
  execFileSync("tar", ["czf", archive, "--exclude=*.sample", "-C", home, "sessions"]);
}

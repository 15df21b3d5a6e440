// The Python side of a session we wrote: python/read_session.py reads it
// with Python's own json module, as the Python OpenProgram store does.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const READER = fileURLToPath(new URL("../../python/read_session.py", import.meta.url));

/** What read_session.py reports for a session it could read. */
export interface PythonReading {
  /** Node ids in file (seq) order. */
  ids: string[];
  /** The active branch, root first. */
  branch: string[];
  /** The top-level nodes' names and statuses, in seq order. */
  top_level: Array<[string, string | null]>;
}

/** Reads `sessionId` under `root` with python3; throws with Python's account of the first problem. */
export function readWithPython(root: string, sessionId: string): PythonReading {
  try {
    return JSON.parse(
      execFileSync("python3", [READER, root, sessionId], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }),
    ) as PythonReading;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? "";
    throw new Error(`Python cannot read session ${sessionId}: ${stderr.trim() || (error as Error).message}`, {
      cause: error,
    });
  }
}

import { lstatSync } from "node:fs";
import type { SessionPaths } from "../layout.js";
import type { AddFinding } from "./types.js";

/**
 * `unsafe_path`: the session directory or one of its folders is a symbolic
 * link (or not a directory). The store refuses to write such a session, and
 * the doctor neither checks it further nor repairs through the link. Returns
 * false when the session must be skipped.
 */
export function checkUnsafePaths(paths: SessionPaths, add: AddFinding): boolean {
  for (const path of [paths.dir, paths.history, paths.state, paths.context, paths.workdir, paths.git]) {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat || stat.isDirectory()) continue;
    add({
      kind: "unsafe_path",
      severity: "error",
      message: `${stat.isSymbolicLink() ? "A symbolic link" : "Not a directory"} where the session keeps a folder: OpenProgram refuses to write this session.`,
      path,
      remedy:
        "Replace it with the real directory (move the target into place); OpenProgram never writes through a link inside the sessions root.",
    });
    return false;
  }
  return true;
}

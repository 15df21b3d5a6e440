import { readLooseObject } from "./loose-objects.js";
import { readPackedObject } from "./pack-file.js";

/** One object of the repository, loose or packed (a delta rebuilt), or null when it is not stored readable. */
export function readObject(gitDir: string, id: string): { type: string; content: Buffer } | null {
  return readLooseObject(gitDir, id) ?? readPackedObject(gitDir, id);
}

/** A regular file's modes in a tree (a link or a submodule is never a node file). */
const FILE_MODES: ReadonlySet<string> = new Set(["100644", "100755"]);

/** A tree's entries: mode (octal text), name and object id. */
export function parseTree(content: Buffer): Array<{ mode: string; name: string; id: string }> {
  const entries: Array<{ mode: string; name: string; id: string }> = [];
  for (let at = 0; at < content.length; ) {
    const space = content.indexOf(0x20, at);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error("a tree entry is cut short");
    entries.push({
      mode: content.toString("latin1", at, space),
      name: content.toString("utf8", space + 1, nul),
      id: content.toString("hex", nul + 1, nul + 21),
    });
    at = nul + 21;
  }
  return entries;
}

/**
 * The blob ids of a commit's `meta.json` and `history/` files, by path relative to the session folder (the
 * files the write-ahead log may name), or null when the commit or its trees cannot be read here.
 */
export function committedFiles(gitDir: string, commit: string): Map<string, string> | null {
  try {
    const commitObject = readObject(gitDir, commit);
    if (commitObject?.type !== "commit") return null;
    const rootId = /^tree ([0-9a-f]{40})\n/.exec(commitObject.content.toString("latin1"))?.[1];
    const root = rootId === undefined ? null : readObject(gitDir, rootId);
    if (root?.type !== "tree") return null;
    const files = new Map<string, string>();
    for (const entry of parseTree(root.content)) {
      if (entry.name === "meta.json" && FILE_MODES.has(entry.mode)) files.set("meta.json", entry.id);
      if (entry.name !== "history" || entry.mode !== "40000") continue;
      const history = readObject(gitDir, entry.id);
      if (history?.type !== "tree") return null;
      for (const file of parseTree(history.content))
        if (FILE_MODES.has(file.mode)) files.set(`history/${file.name}`, file.id);
    }
    return files;
  } catch {
    return null;
  }
}

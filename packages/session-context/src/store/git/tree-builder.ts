import { comparePaths, type IndexEntry } from "./git-index.js";
import type { GitObjectType } from "./loose-objects.js";

/** Writes an object and returns its id. */
export type ObjectWriter = (type: GitObjectType, content: Uint8Array) => string;

interface Folder {
  files: Map<string, IndexEntry>;
  folders: Map<string, Folder>;
}

/** Each entry's line in its tree (`<mode> <name>\0<id>`), made once: an unchanged file is the same entry object. */
const treeLines = new WeakMap<IndexEntry, Buffer>();

/** Writes the trees of an index's entries, deepest first; returns the root tree's id. */
export function writeTrees(entries: readonly IndexEntry[], write: ObjectWriter): string {
  const root: Folder = { files: new Map(), folders: new Map() };
  for (const entry of entries) {
    const parts = entry.path.split("/");
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      let child = folder.folders.get(part);
      if (!child) {
        child = { files: new Map(), folders: new Map() };
        folder.folders.set(part, child);
      }
      folder = child;
    }
    folder.files.set(parts[parts.length - 1] as string, entry);
  }
  return writeFolder(root, write);
}

function writeFolder(folder: Folder, write: ObjectWriter): string {
  const items: Array<{ sortKey: string; line: Buffer }> = [];
  for (const [name, entry] of folder.files) {
    let line = treeLines.get(entry);
    if (!line) {
      line = treeLine(entry.mode.toString(8), name, entry.id);
      treeLines.set(entry, line);
    }
    items.push({ sortKey: name, line });
  }
  for (const [name, child] of folder.folders)
    items.push({ sortKey: `${name}/`, line: treeLine("40000", name, writeFolder(child, write)) });
  // git orders a tree's entries by name bytes, a folder's name compared as if it ended in '/'.
  items.sort((a, b) => comparePaths(a.sortKey, b.sortKey));
  return write("tree", Buffer.concat(items.map((item) => item.line)));
}

function treeLine(mode: string, name: string, id: string): Buffer {
  const head = Buffer.from(`${mode} ${name}\0`, "utf8");
  const line = Buffer.allocUnsafe(head.length + 20);
  head.copy(line, 0);
  line.write(id, head.length, "hex");
  return line;
}

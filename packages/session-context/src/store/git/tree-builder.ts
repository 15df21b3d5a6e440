import type { IndexEntry } from "./git-index.js";
import type { GitObjectType } from "./loose-objects.js";

/** Writes an object and returns its id. */
export type ObjectWriter = (type: GitObjectType, content: Uint8Array) => string;

interface Folder {
  files: Map<string, { mode: number; id: string }>;
  folders: Map<string, Folder>;
}

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
    folder.files.set(parts[parts.length - 1] as string, { mode: entry.mode, id: entry.id });
  }
  return writeFolder(root, write);
}

function writeFolder(folder: Folder, write: ObjectWriter): string {
  const items: Array<{ name: string; sortKey: string; mode: string; id: string }> = [];
  for (const [name, file] of folder.files)
    items.push({ name, sortKey: name, mode: file.mode.toString(8), id: file.id });
  for (const [name, child] of folder.folders)
    items.push({ name, sortKey: `${name}/`, mode: "40000", id: writeFolder(child, write) });
  // git orders a tree's entries by name bytes, a folder's name compared as if it ended in '/'.
  items.sort((a, b) => Buffer.compare(Buffer.from(a.sortKey, "utf8"), Buffer.from(b.sortKey, "utf8")));
  const parts: Buffer[] = [];
  for (const item of items) {
    parts.push(Buffer.from(`${item.mode} ${item.name}\0`, "utf8"), Buffer.from(item.id, "hex"));
  }
  return write("tree", Buffer.concat(parts));
}

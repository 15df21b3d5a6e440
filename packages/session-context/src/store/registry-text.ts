import { escapeNonAscii } from "../json/python-json.js";
import type { SessionRecord } from "./types.js";

/**
 * index.json's text, built from one cached piece per entry: the same bytes as
 * `dumpsPythonIndented(entries)` (JSON.stringify with an indent of 2, then
 * non-ASCII escaped), but a flush re-serialises only the entries that changed
 * since the last one (an entry that did not change is the same object), so
 * its cost does not grow with every session in the store. Entries must not be
 * changed in place once written through this (queued changes make new ones).
 */
export class RegistryText {
  private readonly pieces = new Map<string, { entry: SessionRecord; text: string }>();

  render(entries: Record<string, SessionRecord>): string {
    const parts: string[] = [];
    const seen = new Set<string>();
    for (const id of Object.keys(entries)) {
      const entry = entries[id];
      // JSON.stringify leaves out a key whose value it cannot write.
      if (entry === undefined || typeof entry === "function" || typeof entry === "symbol") continue;
      seen.add(id);
      let piece = this.pieces.get(id);
      if (piece?.entry !== entry) {
        piece = { entry, text: renderPiece(id, entry) };
        this.pieces.set(id, piece);
      }
      parts.push(piece.text);
    }
    if (this.pieces.size > seen.size) for (const id of this.pieces.keys()) if (!seen.has(id)) this.pieces.delete(id);
    return parts.length === 0 ? "{}" : `{\n${parts.join(",\n")}\n}`;
  }
}

function renderPiece(id: string, entry: SessionRecord): string {
  const value = JSON.stringify(entry, null, 2).replaceAll("\n", "\n  ");
  return escapeNonAscii(`  ${JSON.stringify(id)}: ${value}`);
}

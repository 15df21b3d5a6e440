import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../store/atomic-file.js";
import { AttachmentMissingError } from "../errors.js";
import { dumpsPython } from "../json/python-json.js";

/** Where a session keeps its attachments, relative to its `workdir/` (Python OpenProgram's place). */
export const ATTACHMENTS_DIR = "attachments";
/** Python OpenProgram's within-session index of the attachments by content: `{ "<sha256>": "<file name>" }`. */
export const DEDUP_INDEX = ".opdedup.json";

/** A stored attachment: its path relative to the session's `workdir/`, and its hash. */
export interface StoredAttachment {
  path: string;
  sha256: string;
}

/**
 * The attachments of one session, laid out as Python OpenProgram's web chat
 * saves uploads: files in `<session>/workdir/attachments/` under their own
 * names (a taken name with other bytes becomes `name-1.ext`), and
 * `.opdedup.json` mapping each SHA-256 to its file, so the same bytes are
 * stored once. The turn's commit adds them to the session's git history.
 */
export class AttachmentStore {
  private readonly dir: string;

  constructor(private readonly workdir: string) {
    this.dir = join(workdir, ATTACHMENTS_DIR);
  }

  /** Stores `bytes` (once per content) and says where; call under the session's lock. */
  async save(bytes: Uint8Array, name: string): Promise<StoredAttachment> {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const index = this.readIndex();
    const known = index[sha256];
    if (known !== undefined && this.holds(known, sha256)) return { path: `${ATTACHMENTS_DIR}/${known}`, sha256 };
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const fileName = this.freeName(safeAttachmentName(name), sha256);
    if (!this.holds(fileName, sha256)) await writeFileAtomic(join(this.dir, fileName), bytes);
    index[sha256] = fileName;
    // As Python writes it (json.dump, ensure_ascii=False): either side reads the other's, byte for byte the same.
    await writeFileAtomic(join(this.dir, DEDUP_INDEX), dumpsPython(index, { ensureAscii: false }));
    return { path: `${ATTACHMENTS_DIR}/${fileName}`, sha256 };
  }

  /** The recorded bytes, as base64; AttachmentMissingError when the copy is gone or changed. */
  loadBase64(path: string, sha256: string): string {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(this.workdir, path));
    } catch {
      throw new AttachmentMissingError(path, sha256, "is missing");
    }
    if (createHash("sha256").update(bytes).digest("hex") !== sha256)
      throw new AttachmentMissingError(path, sha256, "has changed since it was recorded");
    return bytes.toString("base64");
  }

  private readIndex(): Record<string, string> {
    try {
      const parsed: unknown = JSON.parse(readFileSync(join(this.dir, DEDUP_INDEX), "utf8"));
      return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
        ? (parsed as Record<string, string>)
        : {};
    } catch {
      return {}; // none yet, or damaged: at worst a duplicate copy, never a wrong one (copies are checked by hash)
    }
  }

  /** True when `fileName` exists with exactly these bytes. */
  private holds(fileName: string, sha256: string): boolean {
    try {
      return (
        createHash("sha256")
          .update(readFileSync(join(this.dir, fileName)))
          .digest("hex") === sha256
      );
    } catch {
      return false;
    }
  }

  /**
   * `name`, or Python's next names for it (`stem-1.ext`, `stem-2.ext`…, split
   * at the last dot; `name-1` without one) until one is free or already holds
   * these bytes.
   */
  private freeName(name: string, sha256: string): string {
    const dot = name.lastIndexOf(".");
    for (let n = 0; ; n++) {
      const candidate = n === 0 ? name : dot >= 0 ? `${name.slice(0, dot)}-${n}${name.slice(dot)}` : `${name}-${n}`;
      if (!existsSync(join(this.dir, candidate)) || this.holds(candidate, sha256)) return candidate;
    }
  }
}

/** The names of Python OpenProgram's own files in the attachments folder. */
const INTERNAL_NAMES = new Set([DEDUP_INDEX, ".opsourcepaths.json"]);

/**
 * The stored file's name by Python OpenProgram's rule (its web chat's
 * `_safe_attach_name`): letters, digits, `.`, `_`, `-` and spaces kept, any
 * other character `_`, trimmed, at most 120 characters, `file` when nothing
 * is left, and Python's own index names prefixed `attachment-`. One departure:
 * `.` and `..` (which Python would keep) name the folders, so they become `file`.
 */
export function safeAttachmentName(name: string): string {
  const base = (name.trim().split("/").pop() ?? "") || "file";
  const kept = Array.from(base, (char) => (/^[\p{L}\p{N}._\- ]$/u.test(char) ? char : "_"))
    .join("")
    .trim();
  const safe = Array.from(kept).slice(0, 120).join("") || "file";
  if (safe === "." || safe === "..") return "file";
  return INTERNAL_NAMES.has(safe.toLowerCase()) ? `attachment-${safe.replace(/^\.+/, "")}` : safe;
}

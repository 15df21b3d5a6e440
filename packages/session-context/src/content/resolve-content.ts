import { open } from "node:fs/promises";
import { basename, resolve } from "node:path";
import type Mime from "mime";
import { InputTooLargeError, InvalidInputError } from "../errors.js";
import { describeBytes } from "../input/read-capped.js";
import type { StoredAttachment } from "./attachment-store.js";
import {
  MAX_ATTACHMENT_BYTES,
  MAX_TURN_ATTACHMENT_BYTES,
  type ContentBlock,
  type ContentPart,
  type MediaKind,
  type RecordedBlock,
} from "./content-blocks.js";
import { attachmentMarker } from "./attachment-marker.js";

/** An exec's content blocks, read, stored in the session and ready to send and record. */
export interface ResolvedContent {
  /**
   * The llm node's `prompt_text`, as Python OpenProgram writes it: the text
   * blocks joined by newlines, then its attachment marker for each stored file.
   */
  text: string;
  /** What the provider is sent, in order. */
  parts: ContentPart[];
  /** What the llm node records (`metadata.content_blocks`). */
  recorded: RecordedBlock[];
}

/** Where a block's bytes go: stored once per content in the session; `absolute` names the copy for the marker. */
export interface AttachmentSink {
  save(bytes: Uint8Array, name: string): Promise<StoredAttachment>;
  absolute(path: string): string;
}

/** A media block checked, its bytes still to read. */
type PendingMedia = { kind: MediaKind; mediaType: string; name: string; read: () => Promise<Buffer> };

/**
 * Checks every block (before anything is read or written), reads the files
 * with Python's caps (32 MiB a block, 64 MiB an exec), stores the bytes in
 * the session through `sink` (called only when there are bytes), and returns
 * what to send and to record.
 */
export async function resolveContent(
  blocks: readonly ContentBlock[],
  sink: () => Promise<AttachmentSink>,
): Promise<ResolvedContent> {
  if (!Array.isArray(blocks) || blocks.length === 0)
    throw new InvalidInputError("runtime.exec(content) needs a string or a non-empty array of content blocks.");
  const onlyText = (blocks as readonly unknown[]).every(
    (block) => (block as { type?: unknown } | null)?.type === "text",
  );
  const types = onlyText ? null : await mediaTypes();
  const checked = (blocks as readonly unknown[]).map((block, index) => checkBlock(block, index, types));
  const texts: string[] = [];
  const markers: string[] = [];
  const parts: ContentPart[] = [];
  const recorded: RecordedBlock[] = [];
  let total = 0;
  const store = checked.some((block) => "read" in block) ? await sink() : null;
  for (const block of checked) {
    if ("text" in block) {
      texts.push(block.text);
      parts.push({ type: "text", text: block.text });
      recorded.push({ type: "text", text: block.text });
    } else if ("url" in block) {
      parts.push({ type: "image", url: block.url, ...(block.mediaType ? { mediaType: block.mediaType } : {}) });
      recorded.push({ type: "image", url: block.url, ...(block.mediaType ? { media_type: block.mediaType } : {}) });
    } else {
      const bytes = await block.read();
      total += bytes.length;
      if (total > MAX_TURN_ATTACHMENT_BYTES)
        throw new InputTooLargeError(
          `runtime.exec: the content blocks weigh more than ${describeBytes(MAX_TURN_ATTACHMENT_BYTES)} together, the most one call sends.`,
        );
      const stored = await (store as AttachmentSink).save(bytes, block.name);
      const { kind: type, mediaType, name } = block;
      parts.push({ type, mediaType, name, data: bytes.toString("base64") });
      recorded.push({ type, media_type: mediaType, name, size: bytes.length, ...stored });
      markers.push(attachmentMarker(name, (store as AttachmentSink).absolute(stored.path), bytes.length, mediaType));
    }
  }
  return { text: [texts.join("\n"), ...markers].filter((piece) => piece !== "").join("\n"), parts, recorded };
}

/** mime's tables, loaded for the first block that is not text: every process that imports the core paid for them. */
let mimeTables: Promise<typeof Mime> | undefined;
const mediaTypes = (): Promise<typeof Mime> => (mimeTables ??= import("mime").then((module) => module.default));

function checkBlock(
  block: unknown,
  index: number,
  /** null only when every block is text. */
  types: typeof Mime | null,
): { text: string } | { url: string; mediaType?: string } | PendingMedia {
  const where = `runtime.exec: content block ${index}`;
  if (block === null || typeof block !== "object") throw new InvalidInputError(`${where} is not an object.`);
  const raw = block as Record<string, unknown>;
  if (raw.type === "text") {
    if (typeof raw.text !== "string") throw new InvalidInputError(`${where} (text) needs text: a string.`);
    return { text: raw.text };
  }
  if (raw.type !== "image" && raw.type !== "file" && raw.type !== "audio")
    throw new InvalidInputError(`${where} has type ${JSON.stringify(raw.type)}; use text, image, file or audio.`);
  const kind = raw.type;
  const given = [raw.path, raw.data, raw.url].filter((value) => value !== undefined).length;
  const sources = kind === "image" ? "path, data or url" : "path or data";
  if (given !== 1 || (raw.url !== undefined && kind !== "image"))
    throw new InvalidInputError(`${where} (${kind}) needs exactly one of ${sources}.`);
  if (raw.mediaType !== undefined && (typeof raw.mediaType !== "string" || !raw.mediaType.includes("/")))
    throw new InvalidInputError(`${where} (${kind}): mediaType must be a media type such as "image/png".`);
  const declared = raw.mediaType;
  if (raw.url !== undefined) {
    if (typeof raw.url !== "string" || !/^(https?:|data:)/.test(raw.url))
      throw new InvalidInputError(`${where} (image): url must be an http(s) or data: URL.`);
    return { url: raw.url, ...(declared ? { mediaType: declared } : {}) };
  }
  if (raw.path !== undefined) {
    if (typeof raw.path !== "string" || raw.path === "")
      throw new InvalidInputError(`${where} (${kind}): path must be a file path.`);
    const given = raw.path;
    const path = resolve(given);
    const mediaType = mediaTypeOf(kind, declared ?? types?.getType(path) ?? null, where);
    return { kind, mediaType, name: basename(path), read: () => readCapped(path, `${where} (${kind} ${given})`) };
  }
  const mediaType = mediaTypeOf(kind, declared ?? null, where);
  const bytes = inlineBytes(raw.data, `${where} (${kind})`);
  if (raw.name !== undefined && typeof raw.name !== "string")
    throw new InvalidInputError(`${where} (${kind}): name must be a string.`);
  const extension = types?.getExtension(mediaType);
  const name = raw.name ?? `${kind === "image" ? "image" : "file"}-${index + 1}${extension ? `.${extension}` : ""}`;
  return { kind, mediaType, name, read: () => Promise.resolve(bytes) };
}

/** The block's media type, which must suit its kind (an image's is image/…, audio's audio/…). */
function mediaTypeOf(kind: MediaKind, mediaType: string | null, where: string): string {
  if (mediaType === null) {
    if (kind === "file") return "application/octet-stream";
    throw new InvalidInputError(`${where} (${kind}): say its mediaType; the file name does not tell it.`);
  }
  if (kind !== "file" && !mediaType.startsWith(`${kind}/`))
    throw new InvalidInputError(`${where} (${kind}) has media type ${mediaType}, not ${kind}/….`);
  return mediaType;
}

function inlineBytes(data: unknown, where: string): Buffer {
  if (data instanceof Uint8Array) return checkSize(Buffer.from(data), where);
  if (typeof data !== "string" || !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(data))
    throw new InvalidInputError(`${where}: data must be base64 text or bytes (a Uint8Array).`);
  return checkSize(Buffer.from(data, "base64"), where);
}

function checkSize(bytes: Buffer, where: string): Buffer {
  if (bytes.length > MAX_ATTACHMENT_BYTES) throw tooLarge(where);
  return bytes;
}

function tooLarge(where: string): InputTooLargeError {
  return new InputTooLargeError(
    `${where} is larger than ${describeBytes(MAX_ATTACHMENT_BYTES)}, the most one content block may weigh.`,
  );
}

/** Reads a file, failing as soon as it passes the cap (a growing file or a device stops there too). */
async function readCapped(path: string, where: string): Promise<Buffer> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw new InvalidInputError(
      `${where}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
    );
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(1024 * 1024), 0, 1024 * 1024, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > MAX_ATTACHMENT_BYTES) throw tooLarge(where);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

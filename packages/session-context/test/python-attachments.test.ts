// Attachments, both ways, against Python OpenProgram's own code (its web chat's _persist_attachments and
// _safe_attach_name, its attachments.find_markers and path policy, its store and chat context engine), through
// the committed fixtures in fixtures/python-attachments/ made by make-fixtures.ts and attachments.py. With
// OPENPROGRAM_PYTHON_SRC set to a checkout of Python OpenProgram, Python is also asked again, live, about the
// sessions written here.
//
// Python reads ours: every marker in an exec's metadata.prompt_text names a file Python finds in the workdir it
// resolves for the session, with the bytes the block's hash names, which its path policy lets the page show and
// the agent send; uploading the same bytes again, Python finds our copy through .opdedup.json and writes nothing.
// We read Python's: an exec with the bytes Python stored finds Python's copy by hash; other bytes under a taken
// name are stored as Python would name them; a chat turn sends Python's upload message as Python sends it.
// Alike by design, not by test here: Python's markers carry the absolute path it wrote them at, so the
// python-session fixture's markers name the temporary home its script ran in; neither side follows a marker's
// path to find bytes again (we use the recorded hash and path inside the session, Python the dedup index).
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { safeAttachmentName } from "../src/content/attachment-store.js";
import type { SessionNode } from "../src/index.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import {
  askNextQuestion,
  continuePythonSession,
  FIXTURE_FILES,
  NEXT_QUESTION,
  NOTES,
  OTHER_PNG,
  PNG,
  PYTHON_SESSION_ID,
  runPython,
  SAFE_NAME_CASES,
  writeTypeScriptSession,
  type PythonNextRequest,
  type PythonReadsSession,
} from "./python-attachments.js";

const PYTHON_SOURCE = process.env.OPENPROGRAM_PYTHON_SRC;

let stores: TempStore[] = [];
afterEach(() => {
  for (const store of stores) store.cleanup();
  stores = [];
});

function tempStore(from?: string): TempStore {
  const store = createTempStore("openprogram-python-attachments-", from ? { from } : {});
  stores.push(store);
  return store;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

const sha = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/** The session's attachments folder: its files, and its index as stored (text). */
function attachmentsOf(store: TempStore, sessionId: string): { files: string[]; index: string } {
  const dir = join(store.root, sessionId, "workdir", "attachments");
  return { files: readdirSync(dir).sort(), index: readFileSync(join(dir, ".opdedup.json"), "utf8") };
}

/** The one exec llm node our runtime recorded in the session (the one with content blocks). */
async function execNode(store: TempStore, sessionId: string): Promise<SessionNode> {
  const nodes = await store.db.loadNodes(sessionId);
  const found = nodes.filter((node) => Array.isArray(node.metadata.content_blocks));
  expect(found).toHaveLength(1);
  return found[0] as SessionNode;
}

/** A name as a marker spells it (Python's safe_marker_text: brackets and parentheses would cut it short). */
const markerName = (name: string): string => name.trim().replace(/[[\]()]+/g, "_") || "file";

type Block = { type: string; name?: string; path?: string; sha256?: string };

/** What Python must have found of our exec's stored blocks: a marker each, at the block's path, with its bytes. */
function expectPythonReadsOurBlocks(python: PythonReadsSession, node: SessionNode): void {
  const stored = (node.metadata.content_blocks as Block[]).filter((block) => block.path !== undefined);
  const read = python.nodes.find((entry) => entry.id === node.id);
  expect(read?.content_blocks).toEqual(node.metadata.content_blocks); // the field as Python's store loads it
  expect(read?.markers).toEqual(
    stored.map((block) => ({
      name: markerName(block.name as string),
      in_workdir: block.path,
      exists: true,
      sha256: block.sha256,
      readable: true,
      sendable: true,
    })),
  );
  // Uploaded again through Python's web chat: Python finds our copy through .opdedup.json and writes nothing.
  expect(python.uploaded_again).toEqual(
    stored.map((block) => ({ name: block.name, path: block.path, sha256: block.sha256 })),
  );
  expect(python.files_after).toEqual(python.files_before);
}

describe("Python OpenProgram reads the attachments our runtime stored", () => {
  it("finds every marked file with the recorded bytes, and reuses our copies when the same bytes come again", async () => {
    const fixture = tempStore(FIXTURE_FILES.typescriptSession);
    const [sessionId] = readdirSync(fixture.root).filter((name) => name.startsWith("session_"));
    const node = await execNode(fixture, sessionId as string);
    const python = readJson<PythonReadsSession>(FIXTURE_FILES.pythonReadsTypescript);
    expectPythonReadsOurBlocks(python, node);
    expect(python.index_after).toEqual(JSON.parse(attachmentsOf(fixture, sessionId as string).index));

    // The fixture is what our runtime writes today: the same blocks, files and index, byte for byte as Python's.
    const fresh = tempStore();
    const freshId = await writeTypeScriptSession(fresh.db, fresh.home);
    const freshNode = await execNode(fresh, freshId);
    expect(freshNode.metadata.content_blocks).toEqual(node.metadata.content_blocks);
    expect(freshNode.metadata.content_blocks).toEqual([
      { type: "text", text: "What do the tides do this week?" },
      {
        type: "image",
        media_type: "image/png",
        name: "tide chart (v2).png",
        size: PNG.length,
        path: "attachments/tide chart _v2_.png",
        sha256: sha(PNG),
      },
      {
        type: "file",
        media_type: "text/plain",
        name: "notes.txt",
        size: NOTES.length,
        path: "attachments/notes.txt",
        sha256: sha(NOTES),
      },
      {
        type: "image",
        media_type: "image/png",
        name: "image-4.png",
        size: PNG.length,
        path: "attachments/tide chart _v2_.png",
        sha256: sha(PNG),
      },
    ]);
    expect(attachmentsOf(fresh, freshId)).toEqual({
      files: [".opdedup.json", "notes.txt", "tide chart _v2_.png"],
      // json.dump(index, ensure_ascii=False), as Python's web chat writes it.
      index: `{"${sha(PNG)}": "tide chart _v2_.png", "${sha(NOTES)}": "notes.txt"}`,
    });
    if (PYTHON_SOURCE)
      expectPythonReadsOurBlocks(runPython(PYTHON_SOURCE, ["read-session", fresh.root, freshId]), freshNode);
  });
});

describe("our runtime reads the attachments Python OpenProgram's web chat stored", () => {
  it("finds Python's copy by hash, names other bytes by Python's rule, and Python reads the result", async () => {
    const store = tempStore(FIXTURE_FILES.pythonSession);
    const before = attachmentsOf(store, PYTHON_SESSION_ID);
    expect(before.files).toEqual([".opdedup.json", "chart.png", "notes.txt"]);
    const request = await continuePythonSession(store.db, store.home);

    const node = await execNode(store, PYTHON_SESSION_ID);
    expect((node.metadata.content_blocks as Block[]).map((block) => [block.name, block.path])).toEqual([
      [undefined, undefined],
      ["figure.png", "attachments/chart.png"], // the bytes Python stored as chart.png
      ["chart.png", "attachments/chart-1.png"], // other bytes: Python's next name
    ]);
    expect(readFileSync(join(store.root, PYTHON_SESSION_ID, "workdir/attachments/chart-1.png"))).toEqual(OTHER_PNG);
    // Python's index, extended in Python's format: its entries first, as it wrote them.
    const after = attachmentsOf(store, PYTHON_SESSION_ID);
    expect(after.files).toEqual([".opdedup.json", "chart-1.png", "chart.png", "notes.txt"]);
    expect(after.index).toBe(`${before.index.slice(0, -1)}, "${sha(OTHER_PNG)}": "chart-1.png"}`);
    expect(request.body).toContain(PNG.toString("base64"));

    // Python reads what we added (the committed read was made of this same continuation).
    const python = readJson<PythonReadsSession>(FIXTURE_FILES.pythonReadsContinuation);
    const ours = python.nodes.find((entry) => entry.role === "llm" && entry.content_blocks !== null);
    expect(ours?.content_blocks).toEqual(node.metadata.content_blocks);
    expectPythonReadsOurBlocks(python, { ...node, id: ours?.id as string });
    // Python's own upload message: its markers, as find_markers reads them.
    expect(python.nodes[0]?.markers.map((marker) => marker.name)).toEqual(["chart.png", "notes.txt"]);
    if (PYTHON_SOURCE)
      expectPythonReadsOurBlocks(runPython(PYTHON_SOURCE, ["read-session", store.root, PYTHON_SESSION_ID]), node);
  });

  it("a chat turn sends Python's upload message as Python's own next request does", async () => {
    const store = tempStore(FIXTURE_FILES.pythonSession);
    const request = await askNextQuestion(store.db);
    const python = readJson<PythonNextRequest>(FIXTURE_FILES.pythonNextRequest);
    // Python's provider sends a user message as one text block, we as a string: the same text.
    const theirs = python.aging_off.openai.map((message) =>
      Array.isArray(message.content)
        ? { role: message.role, content: (message.content as Array<{ text: string }>)[0]?.text }
        : message,
    );
    expect(theirs.at(-1)).toEqual({ role: "user", content: NEXT_QUESTION });
    expect((JSON.parse(request.body) as { messages: unknown[] }).messages).toEqual(theirs);
    if (PYTHON_SOURCE) {
      const live = tempStore(FIXTURE_FILES.pythonSession);
      const again = runPython<PythonNextRequest>(PYTHON_SOURCE, [
        "next-request",
        live.root,
        PYTHON_SESSION_ID,
        NEXT_QUESTION,
      ]);
      expect(again.branch).toEqual(python.branch);
    }
  });
});

describe("stored file names", () => {
  it("follow Python's rule (its web chat's _safe_attach_name)", () => {
    const python = readJson<string[]>(FIXTURE_FILES.pythonSafeNames);
    expect(SAFE_NAME_CASES.map(safeAttachmentName)).toEqual(python);
    if (PYTHON_SOURCE) {
      const scratch = tempStore();
      expect(runPython(PYTHON_SOURCE, ["safe-names", scratch.root, JSON.stringify(SAFE_NAME_CASES)])).toEqual(python);
    }
    // Where we depart: "." and ".." name folders.
    expect([".", "..", " .. "].map(safeAttachmentName)).toEqual(["file", "file", "file"]);
  });
});

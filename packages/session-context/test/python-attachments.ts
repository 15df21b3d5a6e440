// Attachment sessions for the two-way proof against Python OpenProgram (python-attachments.test.ts and
// fixtures/python-attachments/make-fixtures.ts): the session our runtime writes, the exec that continues the
// session Python's web chat wrote, and the Python script that reads both with Python's own code.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agenticFunction, chat, sessionContext, type ContentBlock, type SessionDB } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { startFakeOpenAIServer, type ReceivedRequest } from "../src/testing/index.js";
import { runPythonScript } from "./python-fixtures.js";

/** The folder of the committed fixtures and the script that made them. */
export const FIXTURES = fileURLToPath(new URL("./fixtures/python-attachments/", import.meta.url));
/** Python OpenProgram's own code, run by the script (it imports from $OPENPROGRAM_PYTHON_SRC). */
export const PYTHON_SCRIPT = `${FIXTURES}attachments.py`;
/** The committed files, by what they hold. */
export const FIXTURE_FILES = {
  /** A `sessions/` folder holding the session our runtime wrote (writeTypeScriptSession). */
  typescriptSession: `${FIXTURES}typescript-session.tar.gz`,
  /** Python's `read-session` of it. */
  pythonReadsTypescript: `${FIXTURES}python-reads-typescript-session.json`,
  /** A `sessions/` folder holding the session Python's web chat wrote (`write-session`). */
  pythonSession: `${FIXTURES}python-session.tar.gz`,
  /** What Python sends for the next chat turn of that session (`next-request` ... NEXT_QUESTION). */
  pythonNextRequest: `${FIXTURES}python-next-request.json`,
  /** Python's `read-session` of its session after our exec continued it (continuePythonSession). */
  pythonReadsContinuation: `${FIXTURES}python-reads-continuation.json`,
  /** Python's stored-file names for SAFE_NAME_CASES (`safe-names`). */
  pythonSafeNames: `${FIXTURES}python-safe-names.json`,
} as const;

/** The session Python's script writes, and its files. */
export const PYTHON_SESSION_ID = "py_attach";
/** The chat turn our runtime would add to it. */
export const NEXT_QUESTION = "And the low tide?";

/** A 1x1 PNG, the image Python's session holds as chart.png. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
/** Other bytes under the same name: stored beside Python's chart.png by Python's naming rule. */
export const OTHER_PNG = Buffer.concat([PNG, Buffer.from("redrawn")]);
/** The text file our session sends. */
export const NOTES = Buffer.from("Tide heights at Lisbon.\nHigh 3.4 m, low 0.6 m.\n");

/** Names whose stored form Python's rule decides: brackets, spaces, other scripts, emoji, its own index names, lengths. */
export const SAFE_NAME_CASES = [
  "chart.png",
  "tide chart (v2).png",
  "Größe [final].pdf",
  "日本語の表.csv",
  "emoji 😀 plot.png",
  ".opdedup.json",
  ".OpSourcePaths.JSON",
  ".env",
  "dir/inner/name.txt",
  "  padded name .txt  ",
  "tab\tand\nnewline.txt",
  "",
  "%%%",
  `${"long".repeat(40)}.txt`,
];

/** Runs the Python script with Python OpenProgram's source at `source`; its JSON output. */
export function runPython<T>(source: string, args: string[]): T {
  return runPythonScript<T>(PYTHON_SCRIPT, source, args);
}

/** A marker as Python's attachments.find_markers reads it, and what Python finds at its path. */
export interface PythonMarker {
  name: string;
  /** The path relative to the workdir Python resolves for the session. */
  in_workdir: string;
  exists: boolean;
  sha256: string | null;
  /** Python's path policy: the web page may show it (readable_roots), the agent may send it (sendable_roots). */
  readable: boolean;
  sendable: boolean;
}

/** `read-session`: what Python makes of a session's attachments. */
export interface PythonReadsSession {
  workdir: string;
  nodes: Array<{ id: string; role: string; markers: PythonMarker[]; content_blocks: unknown }>;
  /** Every stored block uploaded again through Python's web chat: where Python put the bytes. */
  uploaded_again: Array<{ name: string; path: string; sha256: string }>;
  files_before: string[];
  files_after: string[];
  index_after: Record<string, string> | null;
}

/** `next-request` (tool_calls.py's): Python's next chat request, with tool aging on and off. */
export interface PythonNextRequest {
  branch: Array<{ id: string; role: string }>;
  aging_off: { openai: Array<{ role: string; content: unknown }> };
}

/** Reads an image, a text file and a picture given inline: the exec our session and Python's are sent. */
const describeTides = agenticFunction(
  { name: "describe_tides", doc: "Describe the tides from what you are shown." },
  async ({ blocks }: { blocks: ContentBlock[] }, { runtime }) => runtime.exec(blocks),
);

/** One exec through the real OpenAI SDK and a fake chat-completions server; the session and the request. */
async function runExec(
  db: SessionDB,
  blocks: ContentBlock[],
  sessionId?: string,
): Promise<{ sessionId: string; request: ReceivedRequest }> {
  const server = await startFakeOpenAIServer(() => "High 3.4 m at noon, low 0.6 m at six.");
  try {
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "gpt-test", maxRetries: 0 });
    const id = await sessionContext({ db, runtime, ...(sessionId ? { sessionId } : {}) }, async (session) => {
      await describeTides({ blocks });
      return session.sessionId;
    });
    const [request] = server.requests;
    if (!request || server.requests.length !== 1) throw new Error(`runExec: ${server.requests.length} requests`);
    return { sessionId: id, request };
  } finally {
    await server.close();
  }
}

/**
 * Our runtime writes a session whose exec sends an image (a file whose name Python's rule changes), a text
 * file given inline and the same image again inline (stored once); `dir` holds the image file.
 */
export async function writeTypeScriptSession(db: SessionDB, dir: string): Promise<string> {
  const image = join(dir, "tide chart (v2).png");
  writeFileSync(image, PNG);
  const { sessionId } = await runExec(db, [
    { type: "text", text: "What do the tides do this week?" },
    { type: "image", path: image },
    { type: "file", data: NOTES, mediaType: "text/plain", name: "notes.txt" },
    { type: "image", data: PNG, mediaType: "image/png" },
  ]);
  return sessionId;
}

/**
 * Our runtime continues Python's session with an exec sending the image Python stored (from a file of
 * another name: stored bytes are found by hash) and other bytes named like it; the request it sent.
 */
export async function continuePythonSession(db: SessionDB, dir: string): Promise<ReceivedRequest> {
  const figure = join(dir, "figure.png");
  writeFileSync(figure, PNG);
  const { request } = await runExec(
    db,
    [
      { type: "text", text: "Compare the two charts." },
      { type: "image", path: figure },
      { type: "image", data: OTHER_PNG, mediaType: "image/png", name: "chart.png" },
    ],
    PYTHON_SESSION_ID,
  );
  return request;
}

/** Our runtime asks NEXT_QUESTION in Python's session (a chat turn); the request sent. */
export async function askNextQuestion(db: SessionDB): Promise<ReceivedRequest> {
  const server = await startFakeOpenAIServer(() => "Low 0.6 m at six.");
  try {
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "gpt-test", maxRetries: 0 });
    await sessionContext({ db, runtime, sessionId: PYTHON_SESSION_ID }, () => chat(NEXT_QUESTION));
    return server.requests[0] as ReceivedRequest;
  } finally {
    await server.close();
  }
}

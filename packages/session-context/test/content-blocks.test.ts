import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  AttachmentMissingError,
  InputTooLargeError,
  InvalidInputError,
  sessionContext,
  type ContentBlock,
  type SessionNode,
} from "../src/index.js";
import { createRuntime, MAX_ATTACHMENT_BYTES } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type TempStore,
} from "../src/testing/index.js";

// A 1x1 PNG and a tiny PDF: real bytes, so the base64 on the wire can be compared exactly.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const OTHER_PNG = Buffer.concat([PNG, Buffer.from("changed")]);
const PDF = Buffer.from("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n");
const sha = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

let store: TempStore;
let server: FakeProviderServer | undefined;
let imagePath: string;
beforeEach(() => {
  store = createTempStore("openprogram-content-");
  imagePath = join(store.home, "chart.png");
  writeFileSync(imagePath, PNG);
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

/** Two execs in one function: the second's prompt renders the first's blocks from the record. */
const describeTwice = agenticFunction(
  { name: "describe_twice", doc: "Describe what you are shown." },
  async ({ blocks, between }: { blocks: () => ContentBlock[]; between?: () => void }, { runtime }) => {
    const first = await runtime.exec(blocks());
    between?.();
    return [first, await runtime.exec("And again, shorter.")];
  },
);

async function run(
  provider: "openai" | "anthropic",
  blocks: ContentBlock[],
  between?: (sessionId: string) => void,
): Promise<{ result: unknown; sessionId: string; nodes: SessionNode[] }> {
  server = await (provider === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(() => "A chart.");
  const runtime = createRuntime({ provider, apiKey: "k", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
  let sessionId = "";
  const result = await sessionContext({ db: store.db, runtime }, (session) => {
    sessionId = session.sessionId;
    return describeTwice({ blocks: () => blocks, ...(between ? { between: () => between(sessionId) } : {}) });
  }).catch((error: unknown) => error);
  const nodes = await store.db.loadNodes(sessionId).catch(() => []);
  return { result, sessionId, nodes };
}

/** The content of the request's user message that carries blocks. */
function userParts(provider: "openai" | "anthropic", index: number): unknown {
  const messages = (server?.requests[index]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
  return messages.find((message) => message.role === "user" && Array.isArray(message.content))?.content;
}

const BLOCKS = (): ContentBlock[] => [
  { type: "text", text: "What does the chart show?" },
  { type: "image", path: imagePath },
  { type: "file", data: PDF.toString("base64"), mediaType: "application/pdf", name: "paper.pdf" },
  { type: "image", url: "https://example.org/photo.jpg" },
];

describe("runtime.exec with content blocks", () => {
  it("sends chat-completions content parts and records the blocks by hash in the session", async () => {
    const { result, sessionId, nodes } = await run("openai", BLOCKS());
    expect(result).toEqual(["A chart.", "A chart."]);
    expect(userParts("openai", 0)).toEqual([
      { type: "text", text: "What does the chart show?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
      {
        type: "file",
        file: { filename: "paper.pdf", file_data: `data:application/pdf;base64,${PDF.toString("base64")}` },
      },
      { type: "image_url", image_url: { url: "https://example.org/photo.jpg" } },
    ]);
    const workdir = join(store.root, sessionId, "workdir");
    const llm = nodes.find((node) => node.role === "llm") as SessionNode;
    expect(llm.metadata.content_blocks).toEqual([
      { type: "text", text: "What does the chart show?" },
      {
        type: "image",
        media_type: "image/png",
        name: "chart.png",
        size: PNG.length,
        sha256: sha(PNG),
        path: "attachments/chart.png",
      },
      {
        type: "file",
        media_type: "application/pdf",
        name: "paper.pdf",
        size: PDF.length,
        sha256: sha(PDF),
        path: "attachments/paper.pdf",
      },
      { type: "image", url: "https://example.org/photo.jpg" },
    ]);
    // Python OpenProgram's prompt_text: the text, then its attachment marker per stored file.
    expect(llm.metadata.prompt_text).toBe(
      [
        "What does the chart show?",
        `[attachment: chart.png (png, 1 KB) @json ${JSON.stringify(join(workdir, "attachments/chart.png"))}]`,
        `[attachment: paper.pdf (pdf, 1 KB) @json ${JSON.stringify(join(workdir, "attachments/paper.pdf"))}]`,
      ].join("\n"),
    );
    expect(readFileSync(join(workdir, "attachments/chart.png"))).toEqual(PNG);
    expect(JSON.parse(readFileSync(join(workdir, "attachments/.opdedup.json"), "utf8"))).toEqual({
      [sha(PNG)]: "chart.png",
      [sha(PDF)]: "paper.pdf",
    });
  });

  it("sends Anthropic image and document blocks", async () => {
    await run("anthropic", [
      ...BLOCKS(),
      { type: "file", data: Buffer.from("a,b\n1,2\n"), mediaType: "text/csv", name: "table.csv" },
    ]);
    expect(userParts("anthropic", 0)).toEqual([
      { type: "text", text: "What does the chart show?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG.toString("base64") } },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") },
        title: "paper.pdf",
      },
      { type: "image", source: { type: "url", url: "https://example.org/photo.jpg" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "a,b\n1,2\n" }, title: "table.csv" },
    ]);
  });

  it("re-renders the recorded bytes after the original file changed", async () => {
    for (const provider of ["openai", "anthropic"] as const) {
      await run(
        provider,
        [
          { type: "text", text: "Look." },
          { type: "image", path: imagePath },
        ],
        () => writeFileSync(imagePath, OTHER_PNG),
      );
      expect(server?.requests).toHaveLength(2);
      // The second request repeats the first exchange: its image is the recorded one, not the file as it is now.
      expect(JSON.stringify(userParts(provider, 1))).toContain(PNG.toString("base64"));
      expect(JSON.stringify(userParts(provider, 1))).not.toContain(OTHER_PNG.toString("base64"));
      expect(userParts(provider, 1)).toEqual(userParts(provider, 0));
      await server?.close();
      server = undefined;
      writeFileSync(imagePath, PNG);
    }
  });

  it("stores the same bytes once", async () => {
    const { sessionId } = await run("openai", [
      { type: "image", path: imagePath },
      { type: "image", data: PNG, mediaType: "image/png" },
    ]);
    const index = JSON.parse(
      readFileSync(join(store.root, sessionId, "workdir/attachments/.opdedup.json"), "utf8"),
    ) as Record<string, string>;
    expect(index).toEqual({ [sha(PNG)]: "chart.png" });
  });

  it("fails clearly when the recorded copy is gone, never reading the original", async () => {
    const { result } = await run("openai", [{ type: "image", path: imagePath }], (sessionId) =>
      rmSync(join(store.root, sessionId, "workdir/attachments/chart.png")),
    );
    expect(result).toBeInstanceOf(AttachmentMissingError);
    expect(server?.requests).toHaveLength(1);
  });

  it("refuses blocks it cannot send before any request", async () => {
    const big = Buffer.alloc(MAX_ATTACHMENT_BYTES + 1);
    const cases: Array<[ContentBlock[], "openai" | "anthropic", new (...args: never[]) => Error]> = [
      [[{ type: "image", path: join(store.home, "missing.png") }], "openai", InvalidInputError],
      [[{ type: "image", data: big, mediaType: "image/png" }], "openai", InputTooLargeError],
      [[{ type: "file", path: imagePath, mediaType: "nope" }], "openai", InvalidInputError],
      [[{ type: "audio", data: "UklGRg==", mediaType: "audio/wav" }], "anthropic", InvalidInputError],
      [[], "openai", InvalidInputError],
    ];
    for (const [blocks, provider, expected] of cases) {
      const { result } = await run(provider, blocks);
      expect(result).toBeInstanceOf(expected);
      expect(server?.requests).toHaveLength(0);
      await server?.close();
      server = undefined;
    }
  });
});

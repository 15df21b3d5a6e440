// The parity suite's structured call (issue 33): a schema call whose first reply
// is invalid, with an image block and a file block, behaves the same from every
// entry (code, the CLI binary, the dispatcher over a WebSocket, a child process
// and the research harness's context): the same result, byte-identical
// requests, the same DAG, the blocks recorded by the same hashes and stored in
// the session as the same files.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dagShape, type NodeShape } from "./dag-shape.js";
import { ENTRIES, runScenario, type EntryName, type EntryRun, type Step } from "./entries.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const NOTES = Buffer.from("Tide heights at Lisbon, 3 days.\n").toString("base64");
const VALID = JSON.stringify({ subject: "tides", caption: "High and low tides over three days." });

const dir = mkdtempSync(join(tmpdir(), "openprogram-structured-parity-"));
const image = join(dir, "chart.png");
const STEPS: Step[] = [{ exportName: "describeChart", input: { image, notes: NOTES }, answers: [] }];
/** The first reply is not JSON: it is sent back with the problem, and the second is valid. */
const reply = (_request: unknown, index: number): string => (index === 0 ? "It shows tides." : VALID);

/** The structured call's entries besides the in-process reference: every other entry and the research context. */
const OTHER_ENTRIES: EntryName[] = [...ENTRIES.filter((entry) => entry !== "in-process"), "research-context"];

/**
 * The DAG, with the absolute path of each entry's own store taken out of Python's attachment markers, and each
 * llm node's recorded blocks (`metadata.content_blocks`: hashes, sizes, paths inside the session).
 */
function shapes(run: EntryRun): Array<NodeShape & { contentBlocks: unknown }> {
  const sessionId = run.outcomes[0]?.sessionId as string;
  const nodes = run.nodes.get(sessionId) ?? [];
  return dagShape(nodes).map((node, index) => ({
    ...node,
    promptText:
      typeof node.promptText === "string"
        ? node.promptText.replace(/ @json "[^"]*"/g, ' @json "<path>"')
        : node.promptText,
    contentBlocks: nodes[index]?.metadata.content_blocks ?? null,
  }));
}

/** The session's stored attachments: file name -> SHA-256. */
function stored(run: EntryRun): Record<string, string> | undefined {
  return run.attachments.get(run.outcomes[0]?.sessionId as string);
}

let reference: EntryRun;
beforeAll(async () => {
  writeFileSync(image, PNG);
  reference = await runScenario("in-process", STEPS, reply);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the structured reference run (in-process)", () => {
  it("retries the invalid reply, sends both blocks in each request, and resolves to the value", () => {
    expect(reference.outcomes[0]?.result).toEqual(JSON.parse(VALID));
    expect(reference.bodies).toHaveLength(2);
    for (const body of reference.bodies) {
      const user = (JSON.parse(body) as { messages: Array<{ role: string; content: unknown }> }).messages[1];
      expect(user?.content).toEqual([
        { type: "text", text: "What does the chart show?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
        { type: "file", file: { filename: "notes.txt", file_data: `data:text/plain;base64,${NOTES}` } },
      ]);
    }
    const llm = shapes(reference).filter((node) => node.role === "llm");
    expect(llm.map((node) => node.output)).toEqual(["It shows tides.", VALID]);
    // The first llm node records the blocks by the hash of the bytes stored in the session; the retry, its own
    // llm node, sends them again from that record.
    const sha = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");
    const notes = Buffer.from(NOTES, "base64");
    expect(llm.map((node) => node.contentBlocks)).toEqual([
      [
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
          media_type: "text/plain",
          name: "notes.txt",
          size: notes.length,
          sha256: sha(notes),
          path: "attachments/notes.txt",
        },
      ],
      null,
    ]);
    expect(Object.keys(stored(reference) ?? {})).toEqual([".opdedup.json", "chart.png", "notes.txt"]);
    expect(stored(reference)?.["chart.png"]).toBe(sha(PNG));
  });
});

describe.each(OTHER_ENTRIES)("the %s entry, structured", (entry) => {
  let run: EntryRun;
  beforeAll(async () => {
    run = await runScenario(entry, STEPS, reply);
  });

  it("returns the same value, sends byte-identical requests and records the same DAG", () => {
    expect(
      run.outcomes.map((outcome) => outcome.result),
      `results from the ${entry} entry`,
    ).toEqual(reference.outcomes.map((outcome) => outcome.result));
    expect(run.bodies, `raw request bytes from the ${entry} entry`).toEqual(reference.bodies);
    expect(shapes(run), `the DAG recorded by the ${entry} entry`).toEqual(shapes(reference));
    expect(stored(run), `the attachments stored by the ${entry} entry`).toEqual(stored(reference));
  });
});

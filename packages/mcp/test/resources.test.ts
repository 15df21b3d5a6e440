// A server's resources read as exec's content blocks: text as text, bytes as an image or a file.
import { agenticFunction, sessionContext } from "@openprogram/session-context";
import { scriptedRuntime, type TempStore } from "@openprogram/session-context/testing";
import { describe, expect, it } from "vitest";
import { readMcpResource, readMcpResourceContent } from "../src/index.js";
import { eachTestInMcpSpace, notesEntry, type Scratch } from "./helpers.js";

let store: TempStore;
let space: Scratch;
eachTestInMcpSpace((made) => {
  ({ store, space } = made);
});

describe("MCP resources as exec content", () => {
  it("reads a resource of bytes as a blob block, and as an image exec sends", async () => {
    const config = notesEntry(space.log);
    expect(await readMcpResource("notes", "notes://logo/small", { config })).toEqual([
      { type: "blob", uri: "notes://logo/small", mimeType: "image/png", blob: "iVBORw0KGgo=" },
    ]);
    const content = [
      ...(await readMcpResourceContent("notes", "notes://readme", { config })),
      ...(await readMcpResourceContent("notes", "notes://logo/small", { config })),
    ];
    expect(content).toEqual([
      { type: "text", text: "# Notes\nWrite them down." },
      { type: "image", data: "iVBORw0KGgo=", mediaType: "image/png", name: "small" },
    ]);
    const { runtime, provider } = scriptedRuntime(["A logo and a note."]);
    const look = agenticFunction({ name: "look", doc: "Look." }, async (_: object, { runtime: model }) =>
      model.exec(content),
    );
    expect(await sessionContext({ db: store.db, runtime }, () => look({}))).toBe("A logo and a note.");
    const sent = JSON.stringify(provider.requests[0]?.request.messages);
    expect(sent).toContain("Write them down.");
    expect(sent).toContain("iVBORw0KGgo=");
  });
});

// A server's prompts: listed with their arguments, and got as messages of exec's content blocks.
import { agenticFunction, sessionContext } from "@openprogram/session-context";
import { scriptedRuntime, type TempStore } from "@openprogram/session-context/testing";
import { describe, expect, it } from "vitest";
import { getMcpPrompt, listMcpPrompts, McpRequestError } from "../src/index.js";
import { eachTestInMcpSpace, notesEntry, type Scratch } from "./helpers.js";

let store: TempStore;
let space: Scratch;
eachTestInMcpSpace((made) => {
  ({ store, space } = made);
});

describe("MCP prompts", () => {
  it("lists a server's prompts with their arguments", async () => {
    expect(await listMcpPrompts("notes", { config: notesEntry(space.log) })).toEqual([
      {
        name: "review",
        title: "Review a note",
        description: "Asks for a review of a note.",
        arguments: [
          { name: "note", required: true },
          { name: "tone", required: false },
        ],
      },
    ]);
  });

  it("gets a prompt filled in, as messages of content blocks that exec sends", async () => {
    const config = notesEntry(space.log);
    const prompt = await getMcpPrompt("notes", "review", { note: "buy milk", tone: "kind" }, { config });
    expect(prompt.description).toBe('A review of "buy milk"');
    expect(prompt.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Review this note in a kind tone: buy milk" }] },
      { role: "user", content: [{ type: "text", text: "# Notes\nWrite them down." }] },
      { role: "assistant", content: [{ type: "image", data: "iVBORw0KGgo=", mediaType: "image/png" }] },
    ]);
    expect(prompt.content).toHaveLength(3);

    const { runtime, provider } = scriptedRuntime(["A fine note."]);
    const review = agenticFunction({ name: "review", doc: "Review notes." }, async (_: object, { runtime: model }) =>
      model.exec(prompt.content.slice(0, 2)),
    );
    expect(await sessionContext({ db: store.db, runtime }, () => review({}))).toBe("A fine note.");
    const sent = JSON.stringify(provider.requests[0]?.request.messages);
    expect(sent).toContain("Review this note in a kind tone: buy milk");
    expect(sent).toContain("Write them down.");
  });

  it("names the server when a prompt is refused", async () => {
    const error = await getMcpPrompt("notes", "review", {}, { config: notesEntry(space.log) }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpRequestError);
    expect(error).toMatchObject({ code: "mcp_request_failed", server: "notes", rpcCode: -32602 });
    expect((error as Error).message).toMatch(
      /^The MCP server "notes" refused the prompt review: Invalid arguments.*note/,
    );
  });
});

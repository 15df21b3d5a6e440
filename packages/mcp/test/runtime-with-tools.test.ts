// runtimeWithTools: a server's tools offered in every exec of a turn, the exec's own tools first.
import { agenticFunction, chat, sessionContext, tool } from "@openprogram/session-context";
import { scriptedRuntime, type TempStore } from "@openprogram/session-context/testing";
import { describe, expect, it } from "vitest";
import { mcpTools, runtimeWithTools } from "../src/index.js";
import { eachTestInMcpSpace, notesEntry, type Scratch } from "./helpers.js";

let store: TempStore;
let space: Scratch;
eachTestInMcpSpace((made) => {
  ({ store, space } = made);
});

describe("runtimeWithTools", () => {
  it("offers the tools in an exec that names none, and lets an exec's own tool of the same name win", async () => {
    const tools = await mcpTools("notes", { config: { ...notesEntry(space.log), allow: ["add"] }, only: ["add"] });
    const { runtime, provider } = scriptedRuntime([
      { toolCalls: [{ name: "notes__add", arguments: { a: 2, b: 2 } }] },
      "4.",
      { toolCalls: [{ name: "notes__add", arguments: { a: 2, b: 2 } }] },
      "5, says mine.",
    ]);
    const mine = tool({
      name: "notes__add",
      description: "Adds, badly.",
      input: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
      execute: (args) => Number(args.a) + Number(args.b) + 1,
    });
    const plain = agenticFunction({ name: "plain", doc: "Add." }, async (_: object, { runtime: model }) => [
      await model.exec("Add 2 and 2."),
      await model.exec("Add 2 and 2 your way.", { tools: [mine] }),
    ]);
    const wrapped = runtimeWithTools(runtime, tools);
    expect([wrapped.provider, wrapped.model]).toEqual([runtime.provider, runtime.model]);
    const replies = await sessionContext({ db: store.db, runtime: wrapped }, () => plain({}));
    expect(replies).toEqual(["4.", "5, says mine."]);
    expect(space.effects()).toEqual(["add 2 2"]);
    const offered = provider.requests.map((entry) => entry.request.tools?.map((t) => t.description));
    expect(offered[0]).toEqual(["Adds two numbers."]);
    expect(offered[2]).toEqual(["Adds, badly."]);
  });

  it("offers them in a chat turn too", async () => {
    const tools = await mcpTools("notes", { config: { ...notesEntry(space.log), allow: ["add"] }, only: ["add"] });
    const { runtime } = scriptedRuntime([{ toolCalls: [{ name: "notes__add", arguments: { a: 1, b: 1 } }] }, "2."]);
    expect(await sessionContext({ db: store.db, runtime: runtimeWithTools(runtime, tools) }, () => chat("1+1?"))).toBe(
      "2.",
    );
    expect(space.effects()).toEqual(["add 1 1"]);
  });
});

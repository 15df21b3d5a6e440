// Tool calls inside a child process (issue 32): the child's tool_call and
// tool_result events reach the parent's onEvent, its approval question reaches
// the parent's asker, and the parent turn's approveTools reaches the child.
import { agenticFunction, sessionContext } from "@openprogram/session-context";
import type { ScriptEntry } from "@openprogram/session-context/runtime";
import { createScriptedAsker } from "@openprogram/session-context/testing";
import { describe, expect, it } from "vitest";
import { runInChild } from "../src/index.js";
import { eventRecorder, programPath, scriptedEnv, useTempStore } from "./helpers.js";

const REPLIES: ScriptEntry[] = [
  {
    reply: "Let me check.",
    toolCalls: [
      { name: "weather", arguments: { city: "Oslo" } },
      { name: "book_table", arguments: { place: "Fjord" } },
    ],
  },
  "Ski, then dinner at Fjord.",
];

describe("tool calls in a child process", () => {
  const store = useTempStore();

  const orchestrate = agenticFunction({ name: "orchestrate", doc: "Run the day's plan apart." }, async () =>
    runInChild({ module: programPath("tool-day.ts"), export: "planDay", input: {}, env: scriptedEnv(store, REPLIES) }),
  );

  it("relays the tool events and the approval question; the answer reaches the child", async () => {
    const asker = createScriptedAsker(["yes"]);
    const recorder = eventRecorder();
    const { sessionId, output } = await sessionContext(
      { db: store.db, runtime: null, asker, onEvent: recorder.onEvent, source: "test" },
      async (session) => ({ sessionId: session.sessionId, output: await orchestrate({}) }),
    );
    expect(output).toBe("Ski, then dinner at Fjord.");
    const tools = recorder.events.flatMap((event) =>
      event.type === "tool_call" || event.type === "tool_result"
        ? [`${event.type} ${event.name}${event.type === "tool_result" ? ` ${String(event.ok)}` : ""}`]
        : [],
    );
    expect(tools.filter((line) => line.startsWith("tool_call"))).toEqual(["tool_call weather", "tool_call book_table"]);
    expect(tools.filter((line) => line.startsWith("tool_result")).sort()).toEqual([
      "tool_result book_table true",
      "tool_result weather true",
    ]);
    expect(asker.questions.map((question) => [question.question, question.choices])).toEqual([
      ['Allow the tool book_table to run with {"place":"Fjord"}?', ["yes", "no"]],
    ]);
    const nodes = await store.db.loadNodes(sessionId);
    const reply = nodes.find((node) => node.role === "llm" && node.output === "Let me check.");
    const booking = nodes.find((node) => node.name === "book_table");
    expect(booking).toMatchObject({ caller: reply?.id, output: "booked Fjord" });
    expect(booking?.metadata.tool_call_id).toEqual(expect.any(String));
    expect(nodes.find((node) => node.name === "ask_user")).toMatchObject({ caller: reply?.id, output: "yes" });
  });

  it("the parent turn's approveTools reaches the child: nothing is asked", async () => {
    const asker = createScriptedAsker([]);
    const { sessionId, output } = await sessionContext(
      { db: store.db, runtime: null, asker, approveTools: true, source: "test" },
      async (session) => ({ sessionId: session.sessionId, output: await orchestrate({}) }),
    );
    expect(output).toBe("Ski, then dinner at Fjord.");
    expect(asker.questions).toEqual([]);
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.some((node) => node.name === "ask_user")).toBe(false);
    expect(nodes.find((node) => node.name === "book_table")?.output).toBe("booked Fjord");
  });
});

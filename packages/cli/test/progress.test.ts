import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionNode } from "@openprogram/session-context";
import { createProgressPrinter } from "../src/progress.js";

function sink(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

function node(
  id: string,
  role: SessionNode["role"],
  name: string,
  caller: string,
  metadata: Record<string, unknown>,
): SessionNode {
  return {
    id,
    created_at: 0,
    seq: 0,
    role,
    name,
    input: null,
    output: null,
    caller,
    predecessor: null,
    reads: [],
    metadata,
  };
}

const event = (op: "append" | "update", value: SessionNode): SessionEvent => ({
  type: "node",
  sessionId: "s",
  op,
  node: value,
});

describe("the progress printer", () => {
  const events: SessionEvent[] = [
    event("append", node("a", "code", "pipeline", "", { status: "running" })),
    event("append", node("b", "code", "stage_one", "a", { status: "running" })),
    event("append", node("c", "llm", "gpt", "b", { status: "completed", duration_seconds: 0.5 })),
    event("update", node("b", "code", "stage_one", "a", { status: "completed", duration_seconds: 0.75 })),
    event("append", node("d", "code", "stage_two", "a", { status: "running" })),
    event("update", node("d", "code", "stage_two", "a", { status: "failed", duration_seconds: 1.5 })),
    event("update", node("a", "code", "pipeline", "", { status: "failed", duration_seconds: 2.25 })),
  ];

  it("prints one line per finished call, indented under its caller", () => {
    const out = sink();
    const print = createProgressPrinter(out.stream, { calls: true, stages: false });
    for (const item of events) print(item);
    expect(out.text()).toBe(
      [
        "    ✓ model gpt  completed  0.50s",
        "  ✓ stage_one  completed  0.75s",
        "  ✗ stage_two  failed  1.50s",
        "✗ pipeline  failed  2.25s",
        "",
      ].join("\n"),
    );
  });

  it("with stages only, prints the top-level program's direct subcalls", () => {
    const out = sink();
    const print = createProgressPrinter(out.stream, { calls: false, stages: true });
    for (const item of events) print(item);
    expect(out.text()).toBe(["  ✓ stage_one  completed  0.75s", "  ✗ stage_two  failed  1.50s", ""].join("\n"));
  });
});

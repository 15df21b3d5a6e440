import { describe, expect, it } from "vitest";
import { tokenUpperBound } from "../src/compaction/token-count.js";
import { usageBound } from "../src/compaction/usage-estimate.js";
import type { SessionNode } from "../src/store/types.js";

function node(id: string, role: "user" | "llm", output: string, extra: Partial<SessionNode> = {}): SessionNode {
  return {
    id,
    created_at: 0,
    seq: 0,
    role,
    name: "",
    input: null,
    output,
    caller: "",
    predecessor: null,
    reads: [],
    metadata: {},
    ...extra,
  };
}

const u1 = node("u1", "user", "First question");
const a1 = node("a1", "llm", "First answer", {
  reads: ["u1"],
  metadata: { usage: { inputTokens: 900, outputTokens: 40 }, system: null },
});
const u2 = node("u2", "user", "Second question, a little longer than the first");
const nodes = new Map([u1, a1, u2].map((entry) => [entry.id, entry]));

describe("usageBound: the provider's count of the previous request plus what was added since", () => {
  it("adds the reply's input and output to a byte bound of the nodes and message after it", () => {
    const added = tokenUpperBound([
      { role: "user", content: "Second question, a little longer than the first" },
      { role: "user", content: "Third" },
    ]);
    expect(usageBound(["u1", "a1", "u2"], nodes, null, "Third")).toBe(900 + 40 + 4 + added);
  });

  it("gives up when the request does not read what that reply read (a compaction, another branch, another system)", () => {
    expect(usageBound(["summary", "a1", "u2"], nodes, null, "Third")).toBe(null);
    expect(usageBound(["u1", "a1", "u2"], nodes, "A system message", "Third")).toBe(null);
    const noUsage = new Map(nodes);
    noUsage.set("a1", { ...a1, metadata: {} });
    expect(usageBound(["u1", "a1", "u2"], noUsage, null, "Third")).toBe(null);
    expect(usageBound(["u1"], nodes, null, "Third")).toBe(null);
  });
});

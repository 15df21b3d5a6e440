// The parity suite (issue 8 section 1): one reference program through every
// entry; each entry must match the in-process run exactly. A mismatch prints
// a diff of what differed, labelled with the entry.
import { beforeAll, describe, expect, it } from "vitest";
import { dagShape, type NodeShape } from "./dag-shape.js";
import { ENTRIES, runScenario, TRIP_STEPS, tripReply, type EntryRun } from "./entries.js";

function shapes(run: EntryRun): NodeShape[] {
  const sessionId = run.outcomes[0]?.sessionId as string;
  return dagShape(run.nodes.get(sessionId) ?? []);
}

let reference: EntryRun;
beforeAll(async () => {
  reference = await runScenario("in-process", TRIP_STEPS, tripReply);
});

describe("the reference run (in-process) records what the program does", () => {
  it("records nested calls, the question, the caught failure and the continuation", () => {
    const dag = shapes(reference);
    expect(dag.map((node) => `${node.role}:${node.name}<${node.caller ?? ""}:${String(node.status)}`)).toEqual([
      "code:plan_trip<:completed",
      "user:ask_user<0:answered",
      "code:look_up_visa<0:failed",
      "code:summarize_options<0:completed",
      "llm:parity-model<3:completed",
      "llm:parity-model<0:completed",
      "code:refine_plan<:completed",
      "llm:parity-model<6:completed",
    ]);
    expect(dag[1]).toMatchObject({
      input: "Which style of trip to Lisbon?",
      output: "comfort",
      choices: ["budget", "comfort", "luxury"],
    });
    expect(dag[2]?.error).toMatchObject({ name: "Error", message: "no visa data for Lisbon" });
    expect(dag[6]?.predecessor).toBe(0);
    expect(reference.outcomes.map((outcome) => outcome.created)).toEqual([true, false]);
    expect(reference.outcomes[1]?.sessionId).toBe(reference.outcomes[0]?.sessionId);
    // The continuation sees the first turn.
    const continuation = JSON.parse(reference.bodies[2] as string) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(continuation.messages[0]?.content).toMatch(/^Refine the earlier plan/);
    expect(continuation.messages[1]?.content).toBe('Call plan_trip with input {"days":3,"destination":"Lisbon"}');
    expect(continuation.messages[2]?.content).toMatch(/^plan_trip returned: reply #2/);
  });

  it("streams every request, and records the usage the stream reported", () => {
    for (const body of reference.bodies) {
      expect(JSON.parse(body)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    }
    const llm = [...reference.nodes.values()].flat().filter((node) => node.role === "llm");
    expect(llm).toHaveLength(reference.bodies.length);
    for (const node of llm) {
      const usage = node.metadata.usage as { inputTokens?: unknown; outputTokens?: unknown } | null;
      expect([typeof usage?.inputTokens, typeof usage?.outputTokens]).toEqual(["number", "number"]);
    }
  });
});

describe.each(ENTRIES.filter((entry) => entry !== "in-process"))(
  "the %s entry behaves exactly as in-process",
  (entry) => {
    let run: EntryRun;
    beforeAll(async () => {
      run = await runScenario(entry, TRIP_STEPS, tripReply);
    });

    it("returns the same results, creating the session once and continuing it with the returned id", () => {
      expect(
        run.outcomes.map((outcome) => outcome.result),
        `results from the ${entry} entry`,
      ).toEqual(reference.outcomes.map((outcome) => outcome.result));
      expect(
        run.outcomes.map((outcome) => outcome.created),
        `created flags from the ${entry} entry`,
      ).toEqual([true, false]);
      expect(run.outcomes[1]?.sessionId, `continuation session from the ${entry} entry`).toBe(
        run.outcomes[0]?.sessionId,
      );
    });

    it("sends the model byte-identical request bodies", () => {
      // Parsed first, for a readable diff; then the raw bytes.
      expect(
        run.bodies.map((body) => JSON.parse(body) as unknown),
        `request bodies from the ${entry} entry`,
      ).toEqual(reference.bodies.map((body) => JSON.parse(body) as unknown));
      expect(run.bodies, `raw request bytes from the ${entry} entry`).toEqual(reference.bodies);
    });

    it("records the same DAG: roles, names, docs, caller nesting, statuses, the ask_user node, prompts", () => {
      expect(shapes(run), `the DAG recorded by the ${entry} entry`).toEqual(shapes(reference));
    });

    // Only the dispatcher streams to a client; the other entries have no such test (rather than a skipped one).
    if (entry === "dispatcher")
      it("streams each reply to the web client: its deltas add up to the node's output", () => {
        const llm = [...run.nodes.values()].flat().filter((node) => node.role === "llm");
        const streamed = Object.assign({}, ...run.outcomes.map((outcome) => outcome.streamed ?? {})) as Record<
          string,
          string
        >;
        expect(Object.keys(streamed).sort()).toEqual(llm.map((node) => node.id).sort());
        for (const node of llm) expect(streamed[node.id], `deltas of llm node ${node.id}`).toBe(node.output);
      });
  },
);

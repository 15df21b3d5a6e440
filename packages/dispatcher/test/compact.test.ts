import { SUMMARIZE_CONVERSATION_DOC } from "@openprogram/session-context/compaction";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { asFrame, closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

/** The web page's note for a compaction frame (web/summary-block.js, loaded as the page loads it). */
async function pageNote(frame: unknown): Promise<string> {
  const page = (await import(new URL("../web/summary-block.js", import.meta.url).href)) as {
    compactionNote(frame: unknown): string;
  };
  return page.compactionNote(frame);
}

describe("compact: a session compacted from the web", () => {
  it("streams the compaction to the session's clients, answers compacted, and the next chat reads the summary", async () => {
    const { runtime, provider } = scriptedRuntime([
      "Noted one.",
      "Noted two.",
      "Noted three.",
      "Noted four.",
      "The user listed four observations.",
      "Noted five.",
    ]);
    const served = await startDispatcher({ runtime });
    const client = await served.connect();
    client.send({ type: "chat", session_id: "web_compact", text: "First observation: three crabs." });
    await client.next("turn_done");
    client.send({ type: "subscribe", session_id: "web_compact" });
    await client.next("subscribed");
    for (const text of ["Second: a kelp ribbon.", "Third: two anemones.", "Fourth: clear water."]) {
      client.send({ type: "chat", session_id: "web_compact", text });
      await client.next("turn_done");
    }
    const before = client.frames.length;
    client.send({ type: "compact", session_id: "web_compact", keep_recent_tokens: 30 });
    const compacted = asFrame(await client.next("compacted"), "compacted");
    expect(compacted.session_id).toBe("web_compact");
    expect(compacted.summary_id).toMatch(/^summary_[0-9a-f]{10}$/);
    // In order: started, the summary's node, finished, then the answer.
    const frames = client.frames.slice(before);
    const kinds = frames
      .filter(
        (frame) => frame.type === "compaction" || (frame.type === "node" && frame.node.name === "context/summary"),
      )
      .map((frame) => (frame.type === "compaction" ? `compaction ${frame.phase}` : "summary node"));
    expect(kinds).toEqual(["compaction started", "summary node", "compaction finished"]);
    const summaryNode = asFrame(
      frames.find((frame) => frame.type === "node" && frame.node.name === "context/summary") as (typeof frames)[number],
      "node",
    ).node;
    expect(summaryNode).toMatchObject({ id: compacted.summary_id, role: "llm", caller: "", predecessor: null });
    expect(summaryNode.output).toBe("[Previous conversation summary]\nThe user listed four observations.");
    const finished = frames.find((frame) => frame.type === "compaction" && frame.phase === "finished");
    expect(finished).toMatchObject({ reason: "manual", summary_id: compacted.summary_id });
    // One wording: the core's sentence (the CLI's stderr line) is the frame's text and the page's note.
    const sentence = `compacted session web_compact: summary ${compacted.summary_id} stands for ${compacted.covered} earlier nodes, ${compacted.kept} kept verbatim (${compacted.tokens_before} -> ${compacted.tokens_after} tokens)`;
    expect(finished).toMatchObject({ text: sentence });
    expect(await pageNote(finished)).toBe(sentence);
    expect(compacted.covered).toBe((summaryNode.metadata.covers_ids as string[]).length);
    expect(provider.requests[4]?.request.messages[0]).toEqual({ role: "system", content: SUMMARIZE_CONVERSATION_DOC });

    client.send({ type: "chat", session_id: "web_compact", text: "Fifth: a starfish." });
    await client.next("turn_done");
    const sent = provider.requests[5]?.request.messages ?? [];
    expect(sent[0]).toEqual({ role: "assistant", content: summaryNode.output });
    expect(sent.at(-1)).toEqual({ role: "user", content: "Fifth: a starfish." });
    expect(sent).toHaveLength(1 + compacted.kept + 1);
  });

  it("refuses an unknown session with session_not_found", async () => {
    const served = await startDispatcher({ runtime: scriptedRuntime([]).runtime });
    const client = await served.connect();
    client.send({ type: "compact", session_id: "no_such_session" });
    expect(await client.next("error")).toMatchObject({ code: "session_not_found", action: "compact" });
  });

  it("sends compaction frames for a turn that compacted by itself", async () => {
    const long = "An observation with enough words in it to fill a small window quickly, ".repeat(6);
    const replies = [...Array.from({ length: 12 }, (_, index) => `Noted ${index}.`)];
    const { runtime, provider } = scriptedRuntime(
      // The summariser's request (its system message is the summariser's doc) takes the first entry.
      [{ when: { system: SUMMARIZE_CONVERSATION_DOC.slice(0, 40) }, reply: "Five observations so far." }, ...replies],
      "gpt-4o-mini",
      { contextWindow: 900 },
    );
    const served = await startDispatcher({ runtime });
    const client = await served.connect();
    client.send({ type: "chat", session_id: "web_auto", text: `1. ${long}` });
    await client.next("turn_done");
    client.send({ type: "subscribe", session_id: "web_auto" });
    await client.next("subscribed");
    let turn = 2;
    while (!provider.requests.some((request) => request.request.messages[0]?.content === SUMMARIZE_CONVERSATION_DOC)) {
      client.send({ type: "chat", session_id: "web_auto", text: `${turn++}. ${long}` });
      await client.next("turn_done");
      expect(turn).toBeLessThan(10);
    }
    const frames = client.frames.filter((frame) => frame.type === "compaction");
    expect(frames.map((frame) => asFrame(frame, "compaction").phase)).toEqual(["started", "finished"]);
    const finished = asFrame(frames[1] as (typeof frames)[number], "compaction");
    expect(finished.reason).toBe("auto");
    expect(finished.summary_id).toMatch(/^summary_[0-9a-f]{10}$/);
    expect(await pageNote(frames[0])).toBe("compacting session web_auto (the conversation neared the model's window)…");
    expect(await pageNote(finished)).toMatch(
      /^compacted session web_auto \(the conversation neared the model's window\): summary summary_[0-9a-f]{10} stands for \d+ earlier nodes, \d+ kept verbatim \(\d+ -> \d+ tokens\)$/,
    );
  });
});

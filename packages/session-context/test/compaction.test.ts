import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  chat,
  ProviderError,
  sessionContext,
  type CompactionEvent,
  type Runtime,
  type SessionEvent,
} from "../src/index.js";
import { compactSession, isContextOverflowError, SUMMARIZE_CONVERSATION_DOC } from "../src/entries/compaction.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type ReceivedRequest,
  type TempStore,
} from "../src/testing/index.js";
import { git } from "./helpers.js";

const PYTHON_SESSIONS_V2 = fileURLToPath(new URL("./fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url));

/** Summaries for the summariser's requests (recognised by their system message), echoes otherwise. */
function replies(request: ReceivedRequest): string {
  const messages = request.json.messages ?? [];
  const system = request.json.system ?? messages.find((message) => message.role === "system")?.content;
  if (system === SUMMARIZE_CONVERSATION_DOC) return `Summary ${request.body.length % 97}: earlier chapters drafted.`;
  const last = [...messages].reverse().find((message) => message.role === "user")?.content ?? "";
  return `Answer to ${String(last).slice(0, 30)}`;
}

const isSummariser = (request: ReceivedRequest): boolean =>
  (request.json.messages ?? []).some((message) => message.content === SUMMARIZE_CONVERSATION_DOC) ||
  request.json.system === SUMMARIZE_CONVERSATION_DOC;

describe("compaction", () => {
  let store: TempStore | undefined;
  let server: FakeProviderServer | undefined;
  afterEach(async () => {
    await server?.close();
    store?.cleanup();
    server = undefined;
  });

  async function setup(options: { window?: number; serverWindow?: number; keep?: number; from?: string } = {}) {
    store = createTempStore("openprogram-compaction-", options.from ? { from: options.from } : {});
    server = await startFakeOpenAIServer(
      (request) => replies(request),
      options.serverWindow ? { contextWindow: options.serverWindow } : {},
    );
    const runtime = createRuntime({
      provider: "openai",
      baseUrl: server.baseUrl,
      apiKey: "test",
      model: "gpt-4o-mini",
      maxRetries: 0,
      ...(options.window ? { contextWindow: options.window } : {}),
      ...(options.keep !== undefined ? { keepRecentTokens: options.keep } : {}),
    }) as Runtime;
    return { db: store.db, runtime, server };
  }

  async function chatTurns(sessionId: string, runtime: Runtime, texts: string[], onEvent?: (e: SessionEvent) => void) {
    const { db } = store as TempStore;
    for (const text of texts) {
      await sessionContext({ sessionId, db, runtime, ...(onEvent ? { onEvent } : {}) }, () => chat(text));
    }
  }

  const chapters = (from: number, to: number): string[] =>
    Array.from({ length: to - from + 1 }, (_, index) => `Draft notes for chapter ${from + index}, with some detail.`);
  /** About 70 tokens each: a small window fills in a few turns. */
  const longChapters = (from: number, to: number): string[] =>
    chapters(from, to).map(
      (text) =>
        `${text} It covers the method, the data set, the threats to validity and the related work in turn, with one paragraph on each and a short list of open questions at the end for the supervisor.`,
    );

  it("compactSession appends one summary node in Python's shape, moves _last_summary_*, and changes nothing else", async () => {
    const { db, runtime, server } = await setup({ keep: 40 });
    await chatTurns("thesis", runtime, chapters(1, 5));
    const root = (store as TempStore).root;
    const history = join(root, "thesis", "history");
    const filesBefore = Object.fromEntries(
      readdirSync(history).map((name) => [name, readFileSync(join(history, name), "utf8")]),
    );
    const metaBefore = await db.readMeta("thesis");
    const commitsBefore = (await db.gitLog("thesis")).length;
    const events: CompactionEvent[] = [];
    const result = await compactSession("thesis", {
      db,
      runtime,
      onEvent: (event) => event.type === "compaction" && events.push(event),
    });

    const nodes = await db.loadNodes("thesis");
    const summary = nodes.at(-1);
    expect(result.summaryId).toBe(summary?.id);
    expect(summary).toMatchObject({
      role: "llm",
      name: "context/summary",
      input: null,
      caller: "",
      predecessor: null,
      reads: [],
      metadata: { type: "compactionSummary", source: "compaction", compaction: true },
    });
    expect(summary?.id).toMatch(/^summary_[0-9a-f]{10}$/);
    expect(String(summary?.output)).toMatch(
      /^\[Previous conversation summary\]\nSummary \d+: earlier chapters drafted\.$/,
    );
    // Covered: the first turns; kept: the most recent turns that fit 40 tokens, from a user message on.
    const conversation = nodes.filter((node) => node.name !== "context/summary");
    const covered = summary?.metadata.covers_ids as string[];
    expect(covered).toEqual(conversation.slice(0, covered.length).map((node) => node.id));
    expect(covered.length).toBeGreaterThanOrEqual(2);
    expect(conversation[covered.length]?.role).toBe("user");
    // Dated as Python dates it: one microsecond before the first covered node, so it sorts before what it covers.
    expect(summary?.created_at).toBe((conversation[0]?.created_at as number) - 1e-6);
    expect([...nodes].sort((a, b) => a.created_at - b.created_at)[0]?.id).toBe(summary?.id);
    expect(result).toMatchObject({ covered: covered.length, kept: conversation.length - covered.length });
    // No node rewritten, the head unmoved, meta.json's summary fields moved; one commit.
    for (const [name, text] of Object.entries(filesBefore))
      expect(readFileSync(join(history, name), "utf8")).toBe(text);
    const metaAfter = await db.readMeta("thesis");
    expect(metaAfter.head_id).toBe(metaBefore.head_id);
    expect(metaAfter._last_summary_id).toBe(summary?.id);
    expect(metaAfter._last_summary_text).toBe(String(summary?.output).split("\n").slice(1).join("\n"));
    expect(typeof metaAfter._last_compacted_at).toBe("number");
    expect(Object.keys(metaAfter).sort()).toEqual(
      [...Object.keys(metaBefore), "_last_summary_id", "_last_summary_text", "_last_compacted_at"].sort(),
    );
    expect((await db.gitLog("thesis")).length).toBe(commitsBefore + 1);
    expect(git(join(root, "thesis"), "status", "--porcelain", "--", "history", "meta.json")).toBe("");
    // The summariser: its doc is the system message, the covered turns its transcript; nothing else in the store.
    const summariser = server.requests.filter(isSummariser);
    expect(summariser).toHaveLength(1);
    const request = summariser[0]?.json.messages ?? [];
    expect(request[0]).toEqual({ role: "system", content: SUMMARIZE_CONVERSATION_DOC });
    expect(request[1]?.content).toContain("User: Draft notes for chapter 1, with some detail.");
    expect(request[1]?.content).not.toContain("<previous-summary>");
    expect((await db.listSessions()).map((session) => session.id)).toEqual(["thesis"]);
    expect(events.map((event) => event.phase)).toEqual(["started", "finished"]);
    expect(events[1]).toMatchObject({ reason: "manual", summaryId: summary?.id });

    // The next turn sends [summary, kept tail..., new message].
    await chatTurns("thesis", runtime, ["And chapter six?"]);
    const sent = server.requests.at(-1)?.json.messages ?? [];
    expect(sent[0]).toEqual({ role: "assistant", content: summary?.output });
    expect(sent.slice(1, -1).map((message) => message.content)).toEqual(
      conversation.slice(covered.length).map((node) => node.output),
    );
    expect(sent.at(-1)).toEqual({ role: "user", content: "And chapter six?" });
  });

  it("re-compaction covers the earlier summary's turns plus new ones, fed the previous summary", async () => {
    const { db, runtime, server } = await setup({ keep: 40 });
    await chatTurns("rolling", runtime, chapters(1, 4));
    const first = await compactSession("rolling", { db, runtime });
    await chatTurns("rolling", runtime, chapters(5, 8));
    const second = await compactSession("rolling", { db, runtime });
    const nodes = await db.loadNodes("rolling");
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const earlier = byId.get(first.summaryId as string)?.metadata.covers_ids as string[];
    const later = byId.get(second.summaryId as string)?.metadata.covers_ids as string[];
    expect(later.slice(0, earlier.length)).toEqual(earlier);
    expect(later.length).toBeGreaterThan(earlier.length);
    expect(later.some((id) => id.startsWith("summary_"))).toBe(false);
    expect(byId.get(second.summaryId as string)?.predecessor).toBe(byId.get(first.summaryId as string)?.predecessor);
    // Python's first covered node of a re-compaction is the previous summary (the view starts with it): 1 µs before it.
    expect(byId.get(second.summaryId as string)?.created_at).toBe(
      (byId.get(first.summaryId as string)?.created_at as number) - 1e-6,
    );
    const lastSummariser = server.requests.filter(isSummariser).at(-1)?.json.messages?.[1]?.content ?? "";
    expect(lastSummariser).toContain("<previous-summary>\n");
    expect(lastSummariser).toContain(String(byId.get(first.summaryId as string)?.output).split("\n")[1]);
    expect(lastSummariser).not.toContain("chapter 1,");
    expect((await db.readMeta("rolling"))._last_summary_id).toBe(second.summaryId);
  });

  it("re-compacting Python's compacted_shared gives the summariser _last_summary_text and extends covers_ids", async () => {
    const { db, runtime, server } = await setup({ keep: 30, from: PYTHON_SESSIONS_V2 });
    const result = await compactSession("compacted_shared", { db, runtime });
    const summary = (await db.loadNodes("compacted_shared")).find((node) => node.id === result.summaryId);
    expect(summary?.metadata.covers_ids).toEqual([
      "u0sha",
      "a0sha",
      "u1sha",
      "a1sha",
      "u2sha",
      "a2sha",
      "u3sha",
      "a3sha",
    ]);
    expect(summary?.predecessor).toBe(null);
    // Python's summary_3bd8271008 is 1796094266.4528484 (u0sha's 1796094266.4528494 less 1e-6); ours is 1e-6 before it.
    expect(summary?.created_at).toBe(1796094266.4528484 - 1e-6);
    // The file holds the number Python's own arithmetic gives (python3: repr(1796094266.4528484 - 1e-6)).
    const file = join((store as TempStore).root, "compacted_shared", "history", `0011-l-${result.summaryId}.json`);
    expect(readFileSync(file, "utf8")).toMatch(/"created_at": ?1796094266\.4528475[,\n}]/);
    const content = server.requests.filter(isSummariser)[0]?.json.messages?.[1]?.content ?? "";
    expect(content).toContain("<previous-summary>\nsummary text\n</previous-summary>");
    expect(content).toContain("User: Draft notes for chapter four");
    expect(content).not.toContain("chapter one");
    expect((await db.readMeta("compacted_shared")).head_id).toBe("a4sha");
  });

  it("finds nothing to compact in a one-turn session and writes nothing", async () => {
    const { db, runtime } = await setup();
    await chatTurns("short", runtime, ["Hello"]);
    const before = (await db.loadNodes("short")).length;
    const result = await compactSession("short", { db, runtime });
    expect(result.summaryId).toBe(null);
    expect((await db.loadNodes("short")).length).toBe(before);
  });

  it("compacts by itself before a request that would pass 80% of the window", async () => {
    const { db, runtime, server } = await setup({ window: 800, serverWindow: 800 });
    const events: SessionEvent[] = [];
    await chatTurns("auto", runtime, longChapters(1, 14), (event) => events.push(event));
    const compactions = events.filter((event): event is CompactionEvent => event.type === "compaction");
    expect(compactions.filter((event) => event.phase === "finished").length).toBeGreaterThan(0);
    expect(compactions.every((event) => event.reason === "auto" && event.phase !== "failed")).toBe(true);
    expect(server.requests.some((request) => request.refused)).toBe(false);
    for (const request of server.requests) expect(request.inputTokens).toBeLessThanOrEqual(640);
    const meta = await db.readMeta("auto");
    expect(typeof meta._last_summary_id).toBe("string");
    // The counts it made are kept for a later process, in our bookkeeping only (git and Python never see them).
    const counts = join((store as TempStore).root, "auto", ".state", "token-counts-o200k_base.json");
    expect(Object.keys((JSON.parse(readFileSync(counts, "utf8")) as { counts: object }).counts).length).toBeGreaterThan(
      0,
    );
    expect(git(join((store as TempStore).root, "auto"), "status", "--porcelain")).toBe("");
  });

  for (const provider of ["openai", "anthropic"] as const) {
    it(`on ${provider}'s context-length error compacts once, retries, and says so on the node`, async () => {
      store = createTempStore("openprogram-overflow-");
      server = await (provider === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(
        (request) => replies(request),
        { contextWindow: 700 },
      );
      // The runtime believes the window is large: only the provider's refusal tells it otherwise.
      const runtime = createRuntime({
        provider,
        baseUrl: server.baseUrl,
        apiKey: "test",
        model: provider === "openai" ? "gpt-4o-mini" : "claude-test",
        maxRetries: 0,
        keepRecentTokens: 150,
      }) as Runtime;
      const { db } = store;
      await chatTurns("overflow", runtime, longChapters(1, 14));
      const refused = server.requests.filter((request) => request.refused);
      expect(refused.length).toBeGreaterThan(0);
      const nodes = await db.loadNodes("overflow");
      const retried = nodes.filter((node) => node.metadata.compaction_retry);
      expect(retried.length).toBe(refused.length);
      for (const node of retried) {
        expect(node.metadata.status).toBe("completed");
        const retry = node.metadata.compaction_retry as { summary_id: string; error: string };
        expect(nodes.some((other) => other.id === retry.summary_id)).toBe(true);
        expect(retry.error).toMatch(
          provider === "openai" ? /maximum context length is 700 tokens/ : /prompt is too long/,
        );
        expect(node.reads[0]).toBe(retry.summary_id);
      }
      expect(nodes.filter((node) => node.role === "llm" && node.metadata.status === "failed")).toEqual([]);
    });
  }

  it("recognises each provider's context-length error and nothing else", () => {
    const openai = Object.assign(new Error("400"), { code: "context_length_exceeded" });
    expect(
      isContextOverflowError(
        new ProviderError("openai", 400, "This model's maximum context length is 8192 tokens.", { cause: openai }),
      ),
    ).toBe(true);
    expect(
      isContextOverflowError(new ProviderError("anthropic", 400, "prompt is too long: 210000 tokens > 200000 maximum")),
    ).toBe(true);
    expect(isContextOverflowError(new ProviderError("openai", 400, "Invalid value for temperature"))).toBe(false);
    expect(isContextOverflowError(new ProviderError("openai", 500, "maximum context length"))).toBe(false);
    expect(isContextOverflowError(new Error("maximum context length"))).toBe(false);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { chat, sessionContext, type CompactionEvent, type Runtime } from "../src/index.js";
import { SUMMARIZE_CONVERSATION_DOC } from "../src/entries/compaction.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type ReceivedRequest,
  type TempStore,
} from "../src/testing/index.js";

// Heavy: 400 chat turns (800 durable node writes) and a score of compactions, each with its own summariser
// session. A loaded 2-core machine takes a minute or two.
const TURNS = 400;
const TURNS_PER_CONTEXT = 10;
const WINDOW = 2_000;

const isSummariser = (request: ReceivedRequest): boolean =>
  request.json.messages?.[0]?.content === SUMMARIZE_CONVERSATION_DOC;

describe("a 400-turn session through a model with a 2,000-token window", () => {
  let store: TempStore | undefined;
  let server: FakeOpenAIServer | undefined;
  afterEach(async () => {
    await server?.close();
    store?.cleanup();
  });

  it(
    "never fails a turn: it compacts when needed and every request stays under the limit",
    { timeout: 600_000 },
    async () => {
      store = createTempStore("openprogram-long-session-");
      // The server refuses any request over the window with OpenAI's context-length error.
      server = await startFakeOpenAIServer(
        (request, index) =>
          isSummariser(request)
            ? `The user is collecting numbered observations about tide pools; the latest were recorded in order (summary ${index}).`
            : `Noted. Observation recorded; ask me for the list whenever you want it back (${index}).`,
        { contextWindow: WINDOW },
      );
      const runtime = createRuntime({
        provider: "openai",
        baseUrl: server.baseUrl,
        apiKey: "test",
        model: "gpt-4o-mini",
        maxRetries: 0,
        contextWindow: WINDOW,
      }) as Runtime;
      const compactions: CompactionEvent[] = [];
      const replies: string[] = [];
      for (let first = 0; first < TURNS; first += TURNS_PER_CONTEXT) {
        await sessionContext(
          {
            sessionId: "long",
            db: store.db,
            runtime,
            onEvent: (event) => event.type === "compaction" && compactions.push(event),
          },
          async () => {
            for (let turn = first; turn < first + TURNS_PER_CONTEXT; turn++) {
              replies.push(
                await chat(
                  `Observation ${turn + 1}: in pool ${(turn % 7) + 1} we saw ${turn % 5} anemones, ${turn % 3} crabs and a ribbon of kelp.`,
                ),
              );
            }
          },
        );
      }
      expect(replies).toHaveLength(TURNS);
      expect(server.requests.filter((request) => request.refused)).toEqual([]);
      for (const request of server.requests) expect(request.inputTokens).toBeLessThanOrEqual(WINDOW);
      const finished = compactions.filter((event) => event.phase === "finished" && event.summaryId);
      expect(compactions.filter((event) => event.phase === "failed")).toEqual([]);
      expect(finished.length).toBeGreaterThanOrEqual(10);
      expect(finished.every((event) => event.reason === "auto")).toBe(true);

      const nodes = await store.db.loadNodes("long");
      const llm = nodes.filter((node) => node.role === "llm" && node.name !== "context/summary");
      expect(llm).toHaveLength(TURNS);
      expect(llm.every((node) => node.metadata.status === "completed")).toBe(true);
      // The last request read the active summary first, then the turns since.
      const meta = await store.db.readMeta("long");
      expect(llm.at(-1)?.reads[0]).toBe(meta._last_summary_id);
      const summary = nodes.find((node) => node.id === meta._last_summary_id);
      const covers = summary?.metadata.covers_ids as string[];
      expect(covers[0]).toBe(nodes[0]?.id);
      expect(covers.some((id) => id.startsWith("summary_"))).toBe(false);
      expect(meta.head_id).toBe(llm.at(-1)?.id);
    },
  );
});

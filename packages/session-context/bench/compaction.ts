// Compaction (issue 16): rendering a long session's prompt over its active summary, and counting a
// 100k-token history with the model's tokenizer, each beside a same-run baseline.
import { iterations, median, report, sample } from "@openprogram/bench-kit";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersistedTokenCounts } from "../src/compaction/persisted-token-counts.js";
import {
  countChatTokens,
  countChatTokensPersisted,
  forgetTokenCounts,
  tokenUpperBound,
} from "../src/compaction/token-count.js";
import { usageBound } from "../src/compaction/usage-estimate.js";
import type { ChatMessage } from "../src/providers/types.js";
import { renderPrompt } from "../src/runtime/render-prompt.js";
import { walkBranch } from "../src/store/session-db.js";
import type { SessionNode } from "../src/store/types.js";

const PACKAGE = "@openprogram/session-context";
const NODES = 10_000;

export async function benchCompaction(): Promise<void> {
  benchRendering();
  await benchTokenCounting();
}

/** 10,000 conversation nodes (user/llm pairs) and a summary covering the first 9,000. */
function longSession(): { nodes: Map<string, SessionNode>; ordered: SessionNode[]; headId: string; summaryId: string } {
  const ordered: SessionNode[] = [];
  let predecessor: string | null = null;
  for (let seq = 0; seq < NODES; seq++) {
    const id = `n${seq}`;
    const user = seq % 2 === 0;
    ordered.push(
      node(
        id,
        seq,
        user ? "user" : "llm",
        `${user ? "Question" : "Answer"} ${seq}: ${"words ".repeat(20)}`,
        predecessor,
      ),
    );
    predecessor = id;
  }
  const covers = ordered.slice(0, 9_000).map((entry) => entry.id);
  const summary = node("summary_0123456789", NODES, "llm", "[Previous conversation summary]\nWhat happened.", null);
  summary.name = "context/summary";
  summary.metadata = { type: "compactionSummary", source: "compaction", compaction: true, covers_ids: covers };
  ordered.push(summary);
  return {
    nodes: new Map(ordered.map((entry) => [entry.id, entry])),
    ordered,
    headId: `n${NODES - 1}`,
    summaryId: summary.id,
  };
}

function node(id: string, seq: number, role: "user" | "llm", output: string, predecessor: string | null): SessionNode {
  return {
    id,
    created_at: seq,
    seq,
    role,
    name: "",
    input: null,
    output,
    caller: "",
    predecessor,
    reads: [],
    metadata: {},
  };
}

function benchRendering(): void {
  const session = longSession();
  const render = (summaryId: string | null) =>
    renderPrompt({ ...session, callId: null, summaryId, system: "You help.", content: "And now?" });
  const rendered = render(session.summaryId);
  if (rendered.messages.length !== 1 + 1 + 1_000 + 1 || rendered.reads[0] !== session.summaryId)
    throw new Error(`the summary did not stand in for its segment (${rendered.messages.length} messages)`);
  const rounds = iterations(50);
  const withSummary: number[] = [];
  const walks: number[] = [];
  const raw: number[] = [];
  // Interleaved, so the machine's load falls on all three alike.
  for (let round = -5; round < rounds; round++) {
    let started = performance.now();
    render(session.summaryId);
    const summarised = performance.now() - started;
    started = performance.now();
    walkBranch(session.nodes, session.headId);
    const walk = performance.now() - started;
    started = performance.now();
    render(null);
    const whole = performance.now() - started;
    if (round >= 0) {
      withSummary.push(summarised);
      walks.push(walk);
      raw.push(whole);
    }
  }
  const figure = median(withSummary);
  report({
    package: PACKAGE,
    metric: `render the prompt of a ${NODES.toLocaleString("en")}-node session with an active summary (covers 9,000; 1,000 kept)`,
    unit: "ms",
    median: figure,
    baseline: median(raw),
    baselineLabel: "the same branch rendered raw, no summary (10,000 messages)",
    target: "<= 20 ms",
    met: figure <= 20,
    samples: rounds,
  });
  report({
    package: PACKAGE,
    metric: "of which: the predecessor walk alone (10,000 nodes)",
    unit: "ms",
    median: median(walks),
    baseline: median(raw),
    baselineLabel: "the same branch rendered raw, no summary (10,000 messages)",
    samples: rounds,
  });
}

/** About 100,000 tokens of varied conversation text; `salt` makes every text new (no cache hit). */
function history(salt: number): ChatMessage[] {
  const words = [
    "tide",
    "pool",
    "anemone",
    "crab",
    "kelp",
    "observation",
    "salinity",
    "η=0.4",
    "東京",
    '{"n": 3}',
    "→",
  ];
  const messages: ChatMessage[] = [];
  for (let index = 0; index < 1_000; index++) {
    let text = `Round ${salt}, message ${index}:`;
    for (let word = 0; word < 30; word++) text += ` ${words[(index * 7 + word * 3 + salt) % words.length]}${word % 9}`;
    messages.push({ role: index % 2 === 0 ? "user" : "assistant", content: text });
  }
  return messages;
}

async function benchTokenCounting(): Promise<void> {
  await countChatTokens(history(-1), "gpt-4o"); // loads the vocabulary once, as the first long request of a process does
  const rounds = iterations(15);
  const cold: number[] = [];
  const library: number[] = [];
  let tokens = 0;
  for (let round = 0; round < rounds; round++) {
    const fresh = history(round);
    const again = history(round + 10_000);
    let started = performance.now();
    tokens = await countChatTokens(fresh, "gpt-4o");
    cold.push(performance.now() - started);
    started = performance.now();
    for (const message of again) countTokens(message.content);
    library.push(performance.now() - started);
  }
  // A cold process over a history an earlier process counted: its counts are in the session's .state/.
  const persistedCold: number[] = [];
  const stateRoot = mkdtempSync(join(tmpdir(), "openprogram-bench-token-counts-"));
  for (let round = 0; round < rounds; round++) {
    const dir = join(stateRoot, `s${round}`);
    const open = (vocabulary: "o200k_base" | "cl100k_base"): PersistedTokenCounts =>
      PersistedTokenCounts.open(dir, vocabulary);
    const earlier = history(round + 20_000);
    await countChatTokensPersisted(earlier, "gpt-4o", open);
    forgetTokenCounts();
    const started = performance.now();
    const counted = await countChatTokensPersisted(earlier, "gpt-4o", open);
    persistedCold.push(performance.now() - started);
    if (counted !== (await countChatTokens(earlier, "gpt-4o"))) throw new Error("persisted counts disagree");
  }
  rmSync(stateRoot, { recursive: true, force: true });
  const messages = history(0);
  const warm = await sample(() => countChatTokens(messages, "gpt-4o"), { iterations: iterations(50), warmup: 3 });
  const bound = await sample(() => tokenUpperBound(messages), { iterations: iterations(50), warmup: 3 });
  // The same history as a session whose last reply recorded the provider's usage: the decision before the next turn.
  const conversation = messages.map((message, index) =>
    node(
      `h${index}`,
      index,
      message.role === "user" ? "user" : "llm",
      message.content,
      index === 0 ? null : `h${index - 1}`,
    ),
  );
  const last = conversation[conversation.length - 1] as SessionNode;
  last.reads = conversation.slice(0, -1).map((entry) => entry.id);
  last.metadata = { usage: { inputTokens: tokens - 40, outputTokens: 40 }, system: null };
  const byId = new Map(conversation.map((entry) => [entry.id, entry]));
  const reads = conversation.map((entry) => entry.id);
  const decided = await sample(() => usageBound(reads, byId, null, "And the next observation?"), {
    iterations: iterations(50),
    warmup: 3,
  });
  const baseline = median(library);
  const label = "gpt-tokenizer's countTokens over the same 1,000 texts, uncached";
  report({
    package: PACKAGE,
    metric: `count a ${Math.round(tokens / 1000)}k-token history (1,000 messages), every text new: the first count of a long session in a process`,
    unit: "ms",
    median: median(cold),
    baseline,
    baselineLabel: label,
    target: "<= 30 ms",
    met: median(cold) <= 30,
    samples: rounds,
  });
  report({
    package: PACKAGE,
    metric: `count a ${Math.round(tokens / 1000)}k-token history in a cold process that an earlier process counted (counts persisted in the session's .state/, validated by each text's SHA-256)`,
    unit: "ms",
    median: median(persistedCold),
    baseline: median(cold),
    baselineLabel: "the same count with every text new (the cold count above, same run)",
    target: "<= 30 ms",
    met: median(persistedCold) <= 30,
    samples: persistedCold.length,
  });
  report({
    package: PACKAGE,
    metric: `count the same ${Math.round(tokens / 1000)}k-token history again (texts cached): what each later turn pays`,
    unit: "ms",
    median: median(warm),
    baseline,
    baselineLabel: label,
    target: "<= 30 ms",
    met: median(warm) <= 30,
    samples: warm.length,
  });
  report({
    package: PACKAGE,
    metric: `decide whether the next request of that ${Math.round(tokens / 1000)}k-token session needs compacting from the usage the provider reported for the last one (no vocabulary loaded)`,
    unit: "ms",
    median: median(decided),
    baseline,
    baselineLabel: label,
    target: "<= 30 ms",
    met: median(decided) <= 30,
    samples: decided.length,
  });
  report({
    package: PACKAGE,
    metric: "the UTF-8 byte bound that skips counting a request far under the window (same history)",
    unit: "ms",
    median: median(bound),
    baseline,
    baselineLabel: label,
    samples: bound.length,
  });
}

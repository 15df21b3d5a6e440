// Compaction (issue 16): rendering a long session's prompt over its active summary, and counting a
// 100k-token history with the model's tokenizer, each beside a same-run baseline.
import { iterations, median, report, sample } from "@openprogram/bench-kit";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PersistedTokenCounts } from "../src/compaction/persisted-token-counts.js";
import {
  countChatTokens,
  countChatTokensPersisted,
  forgetTokenCounts,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_REQUEST,
  tokenUpperBound,
} from "../src/compaction/token-count.js";
import { usageBound } from "../src/compaction/usage-estimate.js";
import { renderPrompt } from "../src/prompt/render-prompt.js";
import { walkBranch } from "../src/store/walk-branch.js";
import type { SessionNode } from "../src/store/types.js";
import { tokenHistory } from "./token-history.js";

const PACKAGE = "@openprogram/session-context";
const NODES = 10_000;

export async function benchCompaction(): Promise<void> {
  benchRendering();
  await benchTokenCounting();
  benchFirstCountOfAProcess();
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

async function benchTokenCounting(): Promise<void> {
  await countChatTokens(tokenHistory(-1), "gpt-4o"); // loads the vocabulary once, as the first long request of a process does
  const rounds = iterations(15);
  const cold: number[] = [];
  const library: number[] = [];
  let tokens = 0;
  for (let round = 0; round < rounds; round++) {
    const fresh = tokenHistory(round);
    const again = tokenHistory(round + 10_000);
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
    const earlier = tokenHistory(round + 20_000);
    await countChatTokensPersisted(earlier, "gpt-4o", open);
    forgetTokenCounts();
    const started = performance.now();
    const counted = await countChatTokensPersisted(earlier, "gpt-4o", open);
    persistedCold.push(performance.now() - started);
    if (counted !== (await countChatTokens(earlier, "gpt-4o"))) throw new Error("persisted counts disagree");
  }
  rmSync(stateRoot, { recursive: true, force: true });
  const messages = tokenHistory(0);
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
    samples: rounds,
  });
  report({
    package: PACKAGE,
    metric: `count a ${Math.round(tokens / 1000)}k-token history in a cold process that an earlier process counted (counts persisted in the session's .state/, validated by each text's SHA-256)`,
    unit: "ms",
    median: median(persistedCold),
    baseline: median(cold),
    baselineLabel: "the same count with every text new (the cold count above, same run)",
    samples: persistedCold.length,
  });
  report({
    package: PACKAGE,
    metric: `count the same ${Math.round(tokens / 1000)}k-token history again (texts cached): what each later turn pays`,
    unit: "ms",
    median: median(warm),
    baseline,
    baselineLabel: label,
    samples: warm.length,
  });
  report({
    package: PACKAGE,
    metric: `decide whether the next request of that ${Math.round(tokens / 1000)}k-token session needs compacting from the usage the provider reported for the last one (no vocabulary loaded)`,
    unit: "ms",
    median: median(decided),
    baseline,
    baselineLabel: label,
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

/**
 * What a fresh process pays for its first count of a long history, in two parts: loading the o200k
 * vocabulary (once per process; reported apart from the count) and the count itself with nothing
 * counted before, not even a piece (no text, piece or merge cached). Each sample is a process of its
 * own, ours and gpt-tokenizer's alone alternating; then the same over prose of made-up words, where most
 * pieces are new (`variedHistory`).
 */
function benchFirstCountOfAProcess(): void {
  const script = fileURLToPath(new URL("./token-count-process.ts", import.meta.url));
  const run = (which: "ours" | "library", corpus: "bench" | "varied") =>
    JSON.parse(execFileSync(process.execPath, ["--import", "tsx", script, which, corpus], { encoding: "utf8" })) as {
      load: number;
      count: number;
      tokens: number;
    };
  const samples = {
    bench: { ours: [] as Sampled[], library: [] as Sampled[] },
    varied: { ours: [] as Sampled[], library: [] as Sampled[] },
  };
  const rounds = iterations(7);
  for (let round = 0; round < rounds; round++)
    for (const corpus of ["bench", "varied"] as const) {
      const mine = run("ours", corpus);
      const theirs = run("library", corpus);
      if (mine.tokens - TOKENS_PER_REQUEST - TOKENS_PER_MESSAGE * 1_000 !== theirs.tokens)
        throw new Error(`the first counts disagree: ${mine.tokens} against ${theirs.tokens}`);
      samples[corpus].ours.push({ ...mine, tokens: theirs.tokens });
      samples[corpus].library.push(theirs);
    }
  for (const corpus of ["bench", "varied"] as const) {
    const { ours, library } = samples[corpus];
    const count = median(ours.map((sampled) => sampled.count));
    const baseline = median(library.map((sampled) => sampled.count));
    const tokens = Math.round((ours[0]?.tokens ?? 0) / 1000);
    // The made-up words are a stress case, not a history a user writes (nearly every piece needs its BPE merge).
    // Counts are figures beside the library's, not targets: issue 31 withdrew the 30 ms one.
    report({
      package: PACKAGE,
      metric:
        corpus === "bench"
          ? `the first count of a new 1,000-message (${tokens}k-token) history in a fresh process, vocabulary loaded, nothing counted yet (no text, piece or merge cached)`
          : `the same over ${tokens}k tokens of prose of 18,000 made-up words (most pieces new to the process)`,
      unit: "ms",
      median: count,
      baseline,
      baselineLabel: "gpt-tokenizer's countTokens over the same texts, first count of its own fresh process",
      samples: rounds,
    });
  }
  report({
    package: PACKAGE,
    metric: "not counted above: loading the o200k vocabulary, once per process (the module and its rank map)",
    unit: "ms",
    median: median(samples.bench.ours.map((sampled) => sampled.load)),
    baseline: median(samples.bench.library.map((sampled) => sampled.load)),
    baselineLabel: "importing gpt-tokenizer's o200k_base alone, in its own fresh process",
    samples: rounds,
  });
}

interface Sampled {
  load: number;
  count: number;
  tokens: number;
}

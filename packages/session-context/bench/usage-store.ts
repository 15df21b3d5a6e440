// A store of many sessions with recorded model calls, written straight to disk in the store's layout (no git: the
// usage readers never need it), for the usage benchmark and the test that checks its totals against a node scan.
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dumpsPython, dumpsPythonIndented } from "../src/json/python-json.js";
import { SessionPaths, nodeFileName } from "../src/store/layout.js";
import { recordUsageTotal } from "../src/store/usage-total.js";
import { usageBuckets } from "../src/usage/usage-buckets.js";
import type { SessionNode } from "../src/store/types.js";

/** What the builder made: how many sessions, and which of them have no current usage total. */
export interface UsageStoreShape {
  sessions: number;
  /** Sessions whose total is missing (a crash before turn end) or stale (a Python turn written after it). */
  withoutCurrentTotal: number;
}

const MODELS = ["gpt-4o-mini", "claude-sonnet-4-5", "llama3.1"] as const;
const DAY = 86_400;
const START = 1_796_000_000; // 2026-12-01 (UTC) and the days after it

/**
 * Writes `count` sessions under `root`: each with 2-6 turns of a program call and its model calls over several
 * days and models (OpenAI-, Anthropic- and Python-shaped usage, and calls with none), an index.json entry and,
 * as turn end leaves it, a usage.json. One session in every `staleEvery` (default 20) has no usage.json, and
 * another a node written after its total, as a Python turn would.
 */
export async function buildUsageStore(
  root: string,
  count: number,
  options: { staleEvery?: number } = {},
): Promise<UsageStoreShape> {
  const every = options.staleEvery ?? 20;
  mkdirSync(root, { recursive: true });
  const index: Record<string, unknown> = {};
  let withoutCurrentTotal = 0;
  for (let s = 0; s < count; s++) {
    const id = `usage_${String(s).padStart(5, "0")}`;
    const paths = new SessionPaths(root, id);
    mkdirSync(paths.history, { recursive: true });
    const created = START + (s % 30) * DAY;
    const nodes: SessionNode[] = [];
    const turns = 2 + (s % 5);
    for (let t = 0; t < turns; t++) {
      const at = created + t * DAY * (s % 3) + t;
      const call = node(nodes.length, "code", "summarise", at, "", { turn_id: `turn_${s}_${t}`, status: "completed" });
      nodes.push(call);
      for (let c = 0; c < 1 + ((s + t) % 3); c++) nodes.push(llm(nodes.length, s + t + c, at + c, call.id));
    }
    for (const entry of nodes) writeNode(paths, entry);
    const meta = {
      id,
      agent_id: "main",
      title: `session ${s}`,
      source: "cli",
      created_at: created,
      updated_at: created + turns,
      project_id: "default",
      head_id: nodes[0]?.id ?? null,
    };
    writeFileSync(paths.meta, dumpsPython(meta));
    index[id] = { ...meta, status: "idle", pinned: false, archived: s % 10 === 9, unread: false };
    if (s % every === 7 % every) {
      withoutCurrentTotal += 1; // crashed before its turn end: no usage.json
      continue;
    }
    await recordUsageTotal(paths, () => usageBuckets(nodes));
    if (s % every === 13 % every) {
      // A turn Python OpenProgram wrote afterwards, with its own usage shape.
      withoutCurrentTotal += 1;
      const late = node(nodes.length, "llm", "", created + 5 * DAY, "", {
        usage: { input_tokens: 900, output_tokens: 40, cache_read: 300, cache_create: 0, total_tokens: 940 },
      });
      writeNode(paths, late);
      // history/'s mtime must differ from the total's even on a file system with coarse timestamps.
      const later = new Date((created + 6 * DAY) * 1000);
      utimesSync(paths.history, later, later);
    }
  }
  writeFileSync(join(root, "index.json"), dumpsPythonIndented(index));
  return { sessions: count, withoutCurrentTotal };
}

function writeNode(paths: SessionPaths, entry: SessionNode): void {
  writeFileSync(join(paths.history, nodeFileName(entry.seq, entry.role, entry.id)), dumpsPython(entry));
}

function node(
  seq: number,
  role: SessionNode["role"],
  name: string,
  createdAt: number,
  caller: string,
  metadata: Record<string, unknown>,
): SessionNode {
  return {
    id: `n${seq.toString(16).padStart(11, "0")}`,
    created_at: createdAt,
    seq,
    role,
    name,
    input: null,
    output: "text",
    caller,
    predecessor: caller === "" ? "ROOT" : null,
    reads: [],
    metadata,
  };
}

/** A model call; every 7th reports no usage (a failed call). */
function llm(seq: number, salt: number, createdAt: number, caller: string): SessionNode {
  const model = MODELS[salt % MODELS.length] as string;
  const usage =
    salt % 7 === 6
      ? null
      : model.startsWith("claude")
        ? { inputTokens: 100 + salt, outputTokens: 20 + (salt % 9), cachedInputTokens: salt % 4 === 0 ? 64 : 0 }
        : { inputTokens: 300 + salt, outputTokens: 30 + (salt % 11), cachedInputTokens: salt % 3 === 0 ? 128 : 0 };
  return node(seq, "llm", model, createdAt, caller, {
    status: usage ? "completed" : "failed",
    provider: model.startsWith("claude") ? "anthropic" : "openai",
    usage,
  });
}

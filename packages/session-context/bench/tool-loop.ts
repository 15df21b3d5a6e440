// Tools (issue 32): a tool loop of 5 iterations through runtime.exec beside a bare OpenAI SDK loop sending the same
// requests and running the same function with nothing recorded, both through the real `openai` package to the fake
// chat-completions server (streamed, tool calls in pieces), alternating in one run; and, in the same rounds, one
// durable write on this disk, so the target can be judged: at most 1.2x the bare loop plus one durable write per
// recorded node (a loop records 5 llm nodes and 4 tool nodes).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report } from "@openprogram/bench-kit";
import OpenAI from "openai";
import { z } from "zod";
import { agenticFunction, sessionContext, tool } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { flushQueuedWrites, SessionDB } from "../src/entries/store.js";
import { walSyncPlacement } from "../src/store/session-wal.js";
import { canonicalJson } from "../src/json/canonical.js";
import { dumpsPython } from "../src/json/python-json.js";
import { startFakeOpenAIServer, type FakeReply, type ReceivedRequest } from "../src/testing/index.js";
import { rawDurableWriteAsync } from "./raw-writes.js";

const PACKAGE = "@openprogram/session-context";
/** Model requests per loop; every one but the last asks for one tool call. */
const ITERATIONS = 5;
const TOOL_CALLS = ITERATIONS - 1;
/** What one loop records: an llm node per request and a code node per tool call. */
const RECORDED_NODES = ITERATIONS + TOOL_CALLS;
const MODEL = "gpt-bench";
const DOC = "Answer the question. Look facts up with the tool, one at a time.";
const PROMPT = "Which of the four cities is warmest today?";
const CITIES = ["Oslo", "Rome", "Lima", "Pune"];

/** The function both loops run: the same body, called with the same arguments. */
function lookupWeather({ city }: { city: string }): { city: string; celsius: number; sky: string } {
  return { city, celsius: 10 + city.length * 3, sky: city.length % 2 === 0 ? "sun" : "rain" };
}

const lookup = tool({
  name: "lookup_weather",
  description: "Today's weather in a city.",
  input: z.object({ city: z.string() }),
  execute: lookupWeather,
});

/** The fake model: a tool call per request until it has four results, then the answer. */
function reply(request: ReceivedRequest): FakeReply {
  const results = (request.json.messages ?? []).filter((message) => message.role === "tool").length;
  if (results >= TOOL_CALLS) return "Lima is warmest today, at 22 C under rain.";
  return {
    reply: `Looking up ${CITIES[results]}.`,
    toolCalls: [{ id: `call_${results + 1}`, name: lookup.name, arguments: { city: CITIES[results] } }],
  };
}

/** The bare loop: one SDK client, the same requests, the same function, nothing recorded. */
async function bareLoop(client: OpenAI): Promise<string> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "system", content: DOC },
    { role: "user", content: PROMPT },
  ];
  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: "function",
      function: { name: lookup.name, description: lookup.description, parameters: lookup.parameters },
    },
  ];
  for (let iteration = 1; ; iteration++) {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) text += delta.content;
      for (const piece of delta?.tool_calls ?? []) {
        const call = (calls[piece.index] ??= { id: "", name: "", arguments: "" });
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.name = piece.function.name;
        if (piece.function?.arguments) call.arguments += piece.function.arguments;
      }
    }
    if (calls.length === 0) return text;
    if (iteration >= ITERATIONS) throw new Error("bare loop: the model still asks for tools");
    messages.push({
      role: "assistant",
      ...(text === "" ? {} : { content: text }),
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: "function" as const,
        // Written as the runtime writes recorded arguments (Python's json.dumps), so the requests are the same bytes.
        function: { name: call.name, arguments: dumpsPython(JSON.parse(call.arguments)) },
      })),
    });
    for (const call of calls)
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: dumpsPython(lookupWeather(JSON.parse(call.arguments) as { city: string }), { ensureAscii: false }),
      });
  }
}

/** The bodies of the requests `loop` sends, with sorted keys and no spaces (the SDK orders keys as it likes). */
async function bodiesOf(requests: readonly ReceivedRequest[], loop: () => Promise<unknown>): Promise<string[]> {
  const before = requests.length;
  await loop();
  return requests.slice(before).map((request) => canonicalJson(JSON.parse(request.body)));
}

export async function benchToolLoop(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-bench-tools-"));
  const server = await startFakeOpenAIServer(reply);
  // The same loop with its store in memory (tmpfs: an fsync returns at once) tells the disk's share from the rest.
  const memoryHome = existsSync("/dev/shm") ? mkdtempSync(join("/dev/shm", "openprogram-bench-tools-")) : null;
  try {
    const db = new SessionDB({ root: join(home, "sessions") });
    const memoryDb = memoryHome ? new SessionDB({ root: join(memoryHome, "sessions") }) : null;
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: MODEL, maxRetries: 0 });
    const client = new OpenAI({ apiKey: "bench", baseURL: server.baseUrl, maxRetries: 0 });
    const rawDir = mkdtempSync(join(home, "raw-"));
    let rawIndex = 0;
    const nodeText = dumpsPython({
      id: "0123456789ab",
      role: "code",
      name: lookup.name,
      output: lookupWeather({ city: "Oslo" }),
    });

    let loopMs = 0;
    // Each loop in a new session: the requests are the same every time (a session that grew would send more).
    const answer = agenticFunction(
      { name: "answer", doc: DOC },
      async (_input: Record<string, never>, { runtime: rt }) => {
        const started = performance.now();
        const text = await rt.exec(PROMPT, { tools: [lookup] });
        loopMs = performance.now() - started;
        return text;
      },
    );
    const ours = async (store: SessionDB = db): Promise<number> => {
      await sessionContext({ db: store, runtime }, () => answer({}));
      return loopMs;
    };
    const bare = async (): Promise<number> => {
      const started = performance.now();
      await bareLoop(client);
      return performance.now() - started;
    };
    const durableWrites = async (): Promise<number[]> => {
      const times: number[] = [];
      for (let write = 0; write < RECORDED_NODES; write++) {
        const started = performance.now();
        await rawDurableWriteAsync(rawDir, `${rawIndex++}.json`, nodeText);
        times.push(performance.now() - started);
      }
      return times;
    };

    for (let warm = 0; warm < 3; warm++) {
      await bare();
      await ours();
      if (memoryDb) await ours(memoryDb);
    }
    // The two loops send the same requests, body for body.
    const bareBodies = await bodiesOf(server.requests, bare);
    const ourBodies = await bodiesOf(server.requests, () => ours());
    if (JSON.stringify(bareBodies) !== JSON.stringify(ourBodies))
      throw new Error(
        `tool-loop bench: the loops sent different requests:\n${bareBodies.join("\n")}\n---\n${ourBodies.join("\n")}`,
      );
    const requestsBefore = server.requests.length;
    const rounds = iterations(40);
    const oursTimes: number[] = [];
    const bareTimes: number[] = [];
    const writeTimes: number[] = [];
    const overheads: number[] = [];
    const inMemory: number[] = [];
    const onPool: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate which side goes first, so neither always follows the other's writes.
      let mine: number;
      let theirs: number;
      if (round % 2 === 0) {
        theirs = await bare();
        mine = await ours();
      } else {
        mine = await ours();
        theirs = await bare();
      }
      oursTimes.push(mine / ITERATIONS);
      bareTimes.push(theirs / ITERATIONS);
      overheads.push((mine - theirs) / ITERATIONS);
      writeTimes.push(...(await durableWrites()));
      if (memoryDb) inMemory.push((await ours(memoryDb)) / ITERATIONS);
      // The same loop with the log's fdatasync handed to the pool, as a process with other sessions at work does.
      walSyncPlacement.onLoopThread = false;
      try {
        onPool.push((await ours()) / ITERATIONS);
      } finally {
        walSyncPlacement.onLoopThread = true;
      }
    }
    const loops = rounds * (memoryDb ? 4 : 3);
    const sent = server.requests.length - requestsBefore;
    if (sent !== loops * ITERATIONS) throw new Error(`tool-loop bench: ${sent} requests, not ${loops * ITERATIONS}`);

    const perIteration = median(oursTimes);
    const barePerIteration = median(bareTimes);
    const write = median(writeTimes);
    const writesPerIteration = (RECORDED_NODES / ITERATIONS) * write;
    const budget = 1.2 * barePerIteration + writesPerIteration;
    report({
      package: PACKAGE,
      metric: `tool loop, ${ITERATIONS} iterations (runtime.exec, ${TOOL_CALLS} plain tool calls, openai SDK to the fake server): time per iteration`,
      unit: "ms",
      median: perIteration,
      baseline: barePerIteration,
      baselineLabel: "(bare openai SDK loop, same requests and function, nothing recorded)",
      target: `<= 1.2x baseline + 1 durable write per recorded node (${budget.toFixed(2)} ms: ${RECORDED_NODES} nodes / ${ITERATIONS} iterations x ${write.toFixed(2)} ms)`,
      met: perIteration <= budget,
      samples: rounds,
    });
    const overhead = median(overheads);
    report({
      package: PACKAGE,
      metric: "tool loop: recording cost per iteration (ours minus the bare loop, same round)",
      unit: "ms",
      median: overhead,
      baseline: writesPerIteration,
      baselineLabel: `(one durable write per recorded node: ${(RECORDED_NODES / ITERATIONS).toFixed(1)} x ${write.toFixed(2)} ms, raw temp+fsync+rename+dir fsync, same rounds)`,
      target: `<= 0.2x the bare iteration + baseline (${(0.2 * barePerIteration + writesPerIteration).toFixed(2)} ms)`,
      met: overhead <= 0.2 * barePerIteration + writesPerIteration,
      samples: rounds,
    });
    report({
      package: PACKAGE,
      metric: "tool loop: time per iteration with the log's fdatasync on the event loop's thread (one session writing)",
      unit: "ms",
      median: perIteration,
      baseline: median(onPool),
      baselineLabel: "(the same loop with it on libuv's pool, as with other sessions at work; same rounds)",
      samples: rounds,
    });
    if (memoryDb)
      report({
        package: PACKAGE,
        metric: "tool loop, the same with the store on tmpfs (no disk waits): time per iteration",
        unit: "ms",
        median: median(inMemory),
        baseline: barePerIteration,
        baselineLabel: "(the bare loop, same rounds)",
        samples: rounds,
      });
  } finally {
    await server.close();
    await flushQueuedWrites();
    rmSync(home, { recursive: true, force: true });
    if (memoryHome) rmSync(memoryHome, { recursive: true, force: true });
  }
}

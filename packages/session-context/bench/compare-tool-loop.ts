// The tool loop of bench/tool-loop.ts (runtime.exec in an agentic function, 4 plain tool calls then the answer,
// the real `openai` SDK to the fake chat-completions server) in this checkout's core beside another checkout's
// (this branch before a change, say), both built and loaded in this one process, with the bare SDK loop of
// tool-loop.ts in the same rounds, alternating, so that the shared machine's drifting load weighs on all alike.
// Prints the median time per iteration of each and the ratios.
// Usage: tsx bench/compare-tool-loop.ts <other checkout's root> [rounds (default 30)]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median } from "@openprogram/bench-kit";
import OpenAI from "openai";
import { z } from "zod";
import { startFakeOpenAIServer, type FakeReply, type ReceivedRequest } from "../src/testing/index.js";
import { loadCore } from "./two-checkouts.js";

const [otherRoot, roundsArgument = "30"] = process.argv.slice(2);
if (!otherRoot) throw new Error("usage: tsx bench/compare-tool-loop.ts <other checkout's root> [rounds]");
const ROUNDS = Number(roundsArgument);
const ITERATIONS = 5;
const CITIES = ["Oslo", "Rome", "Lima", "Pune"];
const DOC = "Answer the question. Look facts up with the tool, one at a time.";
const PROMPT = "Which of the four cities is warmest today?";

/** What this bench uses of a checkout's core (its dist/, typed loosely: the two builds may differ). */
interface Core {
  sessionContext: (options: object, fn: () => Promise<unknown>) => Promise<unknown>;
  agenticFunction: (
    spec: object,
    body: (input: object, context: { runtime: Runtime }) => Promise<unknown>,
  ) => (input: object) => Promise<unknown>;
  tool: (spec: object) => { name: string; description: string; parameters: object };
  createRuntime: (options: object) => Runtime;
  SessionDB: new (options: { root: string }) => object;
  flushQueuedWrites: () => Promise<void>;
}
interface Runtime {
  exec: (content: string, options: object) => Promise<string>;
}

function lookupWeather({ city }: { city: string }): { city: string; celsius: number; sky: string } {
  return { city, celsius: 10 + city.length * 3, sky: city.length % 2 === 0 ? "sun" : "rain" };
}

function reply(request: ReceivedRequest): FakeReply {
  const results = (request.json.messages ?? []).filter((message) => message.role === "tool").length;
  if (results >= CITIES.length) return "Lima is warmest today, at 22 C under rain.";
  return {
    reply: `Looking up ${CITIES[results]}.`,
    toolCalls: [{ id: `call_${results + 1}`, name: "lookup_weather", arguments: { city: CITIES[results] } }],
  };
}

async function load(root: string): Promise<Core> {
  return (await loadCore(join(resolve(root), "packages/session-context/dist"))) as Core;
}

const server = await startFakeOpenAIServer(reply);
const home = mkdtempSync(join(tmpdir(), "openprogram-bench-compare-tools-"));

/** A loop of one checkout: one new session per loop, as in tool-loop.ts; resolves to ms per iteration. */
async function side(root: string, name: string): Promise<() => Promise<number>> {
  const core = await load(root);
  const db = new core.SessionDB({ root: join(home, name) });
  const runtime = core.createRuntime({
    provider: "openai",
    baseUrl: server.baseUrl,
    model: "gpt-bench",
    maxRetries: 0,
  });
  const lookup = core.tool({
    name: "lookup_weather",
    description: "Today's weather in a city.",
    input: z.object({ city: z.string() }),
    execute: lookupWeather,
  });
  let loopMs = 0;
  const answer = core.agenticFunction({ name: "answer", doc: DOC }, async (_input, { runtime: rt }) => {
    const started = performance.now();
    const text = await rt.exec(PROMPT, { tools: [lookup] });
    loopMs = performance.now() - started;
    return text;
  });
  return async () => {
    await core.sessionContext({ db, runtime, fromEnvironment: false }, () => answer({}));
    return loopMs / ITERATIONS;
  };
}

const client = new OpenAI({ apiKey: "bench", baseURL: server.baseUrl, maxRetries: 0 });
async function bare(): Promise<number> {
  const started = performance.now();
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "system", content: DOC },
    { role: "user", content: PROMPT },
  ];
  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: "function",
      function: {
        name: "lookup_weather",
        description: "Today's weather in a city.",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    },
  ];
  for (;;) {
    const stream = await client.chat.completions.create({ model: "gpt-bench", messages, tools, stream: true });
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
    if (calls.length === 0) return (performance.now() - started) / ITERATIONS;
    messages.push({
      role: "assistant",
      content: text,
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: "function" as const,
        function: { name: call.name, arguments: call.arguments },
      })),
    });
    for (const call of calls)
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: JSON.stringify(lookupWeather(JSON.parse(call.arguments) as { city: string })),
      });
  }
}

try {
  const sides = {
    this: await side(join(import.meta.dirname, "../../.."), "this"),
    other: await side(otherRoot, "other"),
    bare: async () => bare(),
  };
  for (let warm = 0; warm < 3; warm++) for (const run of Object.values(sides)) await run();
  const times: Record<keyof typeof sides, number[]> = { this: [], other: [], bare: [] };
  const load0 = loadavg()[0] ?? 0;
  const order: Array<keyof typeof sides> = ["this", "other", "bare"];
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate who goes first, so none always follows another's writes.
    for (let turn = 0; turn < order.length; turn++) {
      const name = order[(round + turn) % order.length] as keyof typeof sides;
      times[name].push(await sides[name]());
    }
  }
  const [thisMs, otherMs, bareMs] = [median(times.this), median(times.other), median(times.bare)];
  process.stdout.write(
    `tool loop, ms per iteration, ${ROUNDS} rounds, load average ${load0.toFixed(1)} -> ${(loadavg()[0] ?? 0).toFixed(1)}\n` +
      `this ${thisMs.toFixed(2)} | other ${otherMs.toFixed(2)} | bare SDK ${bareMs.toFixed(2)}\n` +
      `this / other ${(thisMs / otherMs).toFixed(2)}x | this / bare ${(thisMs / bareMs).toFixed(2)}x | other / bare ${(otherMs / bareMs).toFixed(2)}x\n`,
  );
} finally {
  await server.close();
  rmSync(home, { recursive: true, force: true });
}

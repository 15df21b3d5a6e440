// Runs `count` tool loops of bench/tool-loop.ts's shape (ours only, one new session each) so that
// `strace -f -c -e trace=fsync,fdatasync,rename` can count the durable writes a loop makes:
//   strace -f -c -e trace=fsync,fdatasync,rename npx tsx bench/tool-loop-strace.ts 20
// (subtract a run with 0 loops for the setup's share).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { agenticFunction, sessionContext, tool } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { flushQueuedWrites, SessionDB } from "../src/entries/store.js";
import { startFakeOpenAIServer, type FakeReply, type ReceivedRequest } from "../src/testing/index.js";

const count = Number(process.argv[2] ?? "10");
const idempotent = process.argv[3] === "idempotent";
const CITIES = ["Oslo", "Rome", "Lima", "Pune"];
const lookup = tool({
  name: "lookup_weather",
  description: "Today's weather in a city.",
  input: z.object({ city: z.string() }),
  idempotent,
  execute: ({ city }) => ({ city, celsius: 10 + city.length * 3 }),
});
function reply(request: ReceivedRequest): FakeReply {
  const results = (request.json.messages ?? []).filter((message) => message.role === "tool").length;
  if (results >= CITIES.length) return "Lima.";
  return {
    reply: "",
    toolCalls: [{ id: `call_${results + 1}`, name: lookup.name, arguments: { city: CITIES[results] } }],
  };
}
const home = mkdtempSync(join(tmpdir(), "openprogram-tool-strace-"));
const server = await startFakeOpenAIServer(reply);
const db = new SessionDB({ root: join(home, "sessions") });
const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
const answer = agenticFunction(
  { name: "answer", doc: "Answer." },
  async (_input: Record<string, never>, { runtime: rt }) => rt.exec("Which city is warmest?", { tools: [lookup] }),
);
for (let loop = 0; loop < count; loop++) await sessionContext({ db, runtime }, () => answer({}));
await server.close();
await flushQueuedWrites();
rmSync(home, { recursive: true, force: true });

// A process that exports its spans (OTEL_* from the environment): run with no carrier it runs the reference
// turn and hands `summarise` to a copy of itself; run with the carrier it is that child and joins the turn.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { agenticFunction, sessionContext } from "../../src/index.js";
import { contextCarrierEnv, readContextCarrier } from "../../src/entries/relay.js";
import { createRuntime } from "../../src/entries/runtime.js";
import { startTraceExport } from "../../src/entries/telemetry.js";

const exported = await startTraceExport();
const runtime = createRuntime({
  provider: "openai",
  baseUrl: process.env.FAKE_OPENAI_URL ?? "",
  model: "fake-model",
  maxRetries: 0,
});

const summarise = agenticFunction(
  { name: "summarise", doc: "Summarise the notes." },
  async (input: { notes: string }, call) => call.runtime.exec(`Notes: ${input.notes}`),
);
const inChild = agenticFunction({ name: "in_child", doc: "Runs summarise in a child process." }, async () => {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], {
    env: { ...process.env, ...contextCarrierEnv() },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.on("close", resolve));
  return out.trim();
});
const reference = agenticFunction({ name: "reference", doc: "The reference program." }, async () => {
  const outline = await agenticFunction({ name: "outline", doc: "Outline." }, (_: object, call) =>
    call.runtime.exec("Outline the topic."),
  )({});
  return { outline, summary: await inChild({}) };
});

const result = readContextCarrier()
  ? await sessionContext({ runtime }, () => summarise({ notes: "n" }))
  : await sessionContext({ runtime, title: "traced" }, async (session) => ({
      session: session.sessionId,
      ...(await reference({})),
    }));
await exported?.shutdown();
process.stdout.write(`${JSON.stringify(result)}\n`);

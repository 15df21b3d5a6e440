// A process killed (SIGKILL) while a reply streams leaves its llm node `running`: recovery
// records it interrupted (the abandoned-turn policy), the doctor is content, and resuming the
// turn reuses the replies that completed and sends the interrupted request again, byte for byte.
import { storeInternals } from "../src/store/internal.js";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { sessionContext, type Runtime } from "../src/index.js";
import { createScriptedAsker } from "../src/entries/host.js";
import { createRuntime } from "../src/entries/runtime.js";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { describeTurn, moduleProgramRef, resumeTurn } from "../src/entries/turns.js";
import {
  createTempStore,
  startFakeOpenAIServer,
  waitFor,
  type FakeOpenAIServer,
  type TempStore,
} from "../src/testing/index.js";
import { childScript } from "./helpers.js";
import { planTrip } from "./programs/trip.mjs";

const TRIP_MODULE = fileURLToPath(new URL("./programs/trip.mjs", import.meta.url));
const TRIP = { ref: moduleProgramRef(TRIP_MODULE, "planTrip"), input: { destination: "Lisbon", days: 3 } };

let store: TempStore;
let server: FakeOpenAIServer;
let slowRequest = -1;

beforeEach(async () => {
  store = createTempStore();
  server = await startFakeOpenAIServer((request, index) => {
    const text = `reply to ${request.json.messages?.at(-1)?.content.split("\n")[0] ?? ""}`;
    if (index !== slowRequest) return text;
    // Long enough that the kill always lands mid-stream.
    return { chunks: Array.from({ length: 600 }, (_, n) => `t${n} `), chunkDelayMs: 50 };
  });
});
afterEach(async () => {
  await server.close();
  store.cleanup();
});

it("a turn killed mid-stream is recovered as interrupted and resumes with the same requests", async () => {
  const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
  const reference = await sessionContext(
    { sessionId: "reference", db: store.db, runtime, asker: createScriptedAsker(["comfort"]), program: TRIP },
    () => planTrip(TRIP.input),
  );
  const referenceBodies = server.requests.map((request) => request.body);
  expect(referenceBodies).toHaveLength(3);

  server.requests.length = 0;
  slowRequest = 1;
  const child = spawn(process.execPath, ["--import", "tsx", childScript("stream-trip.ts"), "killed"], {
    env: { ...process.env, OPENPROGRAM_HOME: store.home, TEST_OPENAI_BASE_URL: server.baseUrl },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const running = (): boolean =>
    storeInternals(store.db).exists("killed") &&
    storeInternals(new SessionDB({ root: store.root }))
      .readHistorySync("killed")
      .nodes.some((node) => node.role === "llm" && node.metadata.status === "running");
  await waitFor(() => (server.requests[1]?.timing.firstByteAt ?? null) !== null && running(), "the reply to stream");
  child.kill("SIGKILL");
  await exited;
  expect(stderr).toBe("");
  slowRequest = -1;

  // A new store object, as after a restart: nobody holds the turn, so it is recovered.
  const restarted = new SessionDB({ root: store.root });
  expect(await restarted.recover("killed")).toBe(true);
  const llm = (await restarted.loadNodes("killed")).filter((node) => node.role === "llm");
  expect(llm.map((node) => node.metadata.status)).toEqual(["completed", "interrupted"]);
  expect((await doctorSessions({ db: restarted, sessionId: "killed" })).findings.map((f) => f.kind)).not.toContain(
    "unfinished_node",
  );
  expect(describeTurn({ db: restarted, sessionId: "killed" })).toMatchObject({
    status: "interrupted",
    resumable: true,
  });

  const before = server.requests.length;
  expect(await resumeTurn({ sessionId: "killed", db: restarted, runtime, asker: null })).toEqual(reference);
  const bodies = server.requests.map((request) => request.body);
  // Killed run: requests #0 and #1 (cut short); the resume sends #1 again and then #2, byte for byte.
  expect(bodies.slice(0, before)).toEqual(referenceBodies.slice(0, 2));
  expect(bodies.slice(before)).toEqual(referenceBodies.slice(1));
});

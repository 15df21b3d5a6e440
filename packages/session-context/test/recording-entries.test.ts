// The ways in: OPENPROGRAM_RECORD / OPENPROGRAM_REPLAY through createRuntime() (what every entry uses),
// and useRecording for a user's vitest tests; recorded against a loopback OpenAI server, replayed without it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  chat,
  ProviderConfigError,
  RecordingMissingError,
  ReplayMismatchError,
  sessionContext,
  type Runtime,
} from "../src/index.js";
import { RecordingProvider, ReplayProvider } from "../src/entries/recordings.js";
import { createRuntime, type ModelRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeOpenAIServer,
  useRecording,
  type FakeProviderServer,
  type TempStore,
} from "../src/testing/index.js";

const VARIABLES = [
  "OPENPROGRAM_HOME",
  "OPENPROGRAM_PROVIDER",
  "OPENPROGRAM_MODEL",
  "OPENAI_BASE_URL",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENPROGRAM_SCRIPT",
  "OPENPROGRAM_RECORD",
  "OPENPROGRAM_REPLAY",
];
const KEY = "sk-entry-test-0123456789SECRET";

let store: TempStore;
let server: FakeProviderServer | undefined;
let saved: Record<string, string | undefined>;
beforeEach(() => {
  store = createTempStore("openprogram-recording-entries-");
  saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of VARIABLES) delete process.env[name];
  process.env.OPENPROGRAM_HOME = store.home;
});
afterEach(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  store.cleanup();
  await server?.close();
  server = undefined;
});

async function twoTurns(runtime: Runtime | null, second = "and the ebb?"): Promise<string[] | Error> {
  return sessionContext({ db: store.db, runtime }, async () => [
    await chat("what is a tide?"),
    await chat(second),
  ]).catch((error: unknown) => error as Error);
}

describe("OPENPROGRAM_RECORD and OPENPROGRAM_REPLAY", () => {
  it("record through the configured provider, then replay with no provider configured and the server gone", async () => {
    server = await startFakeOpenAIServer();
    const file = join(store.home, "chat.jsonl");
    Object.assign(process.env, { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: KEY, OPENPROGRAM_RECORD: file });
    const recording = createRuntime() as ModelRuntime;
    expect(recording.provider).toBeInstanceOf(RecordingProvider);
    const live = await twoTurns(recording);
    expect(live).toEqual(["reply #1 to what is a tide?", "reply #2 to and the ebb?"]);
    await server.close();
    server = undefined;
    expect(readFileSync(file, "utf8")).not.toContain(KEY);

    for (const name of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENPROGRAM_RECORD"]) delete process.env[name];
    process.env.OPENPROGRAM_REPLAY = file;
    const replaying = createRuntime() as ModelRuntime;
    expect(replaying.provider).toBeInstanceOf(ReplayProvider);
    expect(replaying.model).toBe("gpt-4o-mini");
    expect(await twoTurns(replaying)).toEqual(live);

    // Cached like any configuration: a new ReplayProvider (from call 0) only when the variables change.
    process.env.OPENPROGRAM_REPLAY = `${store.home}/./chat.jsonl`;
    const changed = await twoTurns(createRuntime(), "and the flood?");
    expect(changed).toBeInstanceOf(ReplayMismatchError);
    expect((changed as ReplayMismatchError).message).toMatch(
      /^replay mismatch at call 1, field messages\[\d\]\.content: recorded "and the ebb\?", incoming "and the flood\?"/,
    );
  });

  it("refuses recording and replaying at once", () => {
    Object.assign(process.env, {
      OPENPROGRAM_SCRIPT: "[]",
      OPENPROGRAM_RECORD: "a.jsonl",
      OPENPROGRAM_REPLAY: "b.jsonl",
    });
    expect(() => createRuntime()).toThrow(ProviderConfigError);
  });
});

describe("useRecording", () => {
  it("fails with the command that records it when the recording is missing", () => {
    const error = (() => {
      try {
        useRecording("never-made");
      } catch (caught) {
        return caught as RecordingMissingError;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(RecordingMissingError);
    expect(error?.recording).toBe(join(import.meta.dirname, "__recordings__", "never-made.jsonl"));
    expect(error?.message).toContain(
      `OPENPROGRAM_RECORD=1 npx vitest run ${join(import.meta.dirname, "recording-entries.test.ts")}`,
    );
  });

  it("records with OPENPROGRAM_RECORD=1 against the configured model, then replays offline", async () => {
    server = await startFakeOpenAIServer();
    const dir = join(store.home, "tests");
    const env = { OPENPROGRAM_HOME: store.home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: KEY };
    const recorded = useRecording("tides", { dir, env: { ...env, OPENPROGRAM_RECORD: "1" } });
    expect(recorded.mode).toBe("record");
    const live = await twoTurns(recorded.runtime);
    await server.close();
    server = undefined;
    expect(existsSync(join(dir, "__recordings__", "tides.jsonl"))).toBe(true);

    const replayed = useRecording("tides", { dir, env: { OPENPROGRAM_HOME: store.home } });
    expect(replayed.mode).toBe("replay");
    expect(await twoTurns(replayed.runtime)).toEqual(live);
  });

  it("without a provider configured, recording says what to set", () => {
    expect(() =>
      useRecording("x", { dir: store.home, env: { OPENPROGRAM_HOME: store.home, OPENPROGRAM_RECORD: "1" } }),
    ).toThrow(/none is configured: set OPENAI_API_KEY/);
  });
});

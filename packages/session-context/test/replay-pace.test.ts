// Paced replay: a recording keeps when each event arrived, and `pace` delivers a call's events at those gaps.
// Timing is asserted only from below (a paced replay is never faster than the recorded gaps, minus a tolerance
// for timer granularity), measured by this test's own clock: a loaded machine only makes it slower.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  readRecording,
  RecordingProvider,
  recordingOptionsFromEnv,
  ReplayProvider,
} from "../src/entries/recordings.js";
import { createTempStore, startFakeOpenAIServer, type TempStore } from "../src/testing/index.js";
import type { FakeProviderServer } from "../src/testing/index.js";
import { OpenAIChatProvider } from "../src/providers/openai.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function store(): TempStore {
  const created = createTempStore();
  cleanups.push(() => created.cleanup());
  return created;
}

async function server(): Promise<FakeProviderServer> {
  // 120 ms before the first piece, 120 ms between pieces: 360 ms of gaps in all.
  const started = await startFakeOpenAIServer(() => ({
    chunks: ["slow ", "and ", "steady"],
    delayMs: 120,
    chunkDelayMs: 120,
  }));
  cleanups.push(() => started.close());
  return started;
}

const REQUEST = { model: "gpt-test", messages: [{ role: "user" as const, content: "pace yourself" }] };

/** One replayed call: its pieces in order and how long it took by this test's clock. */
async function replay(provider: ReplayProvider, signal = new AbortController().signal) {
  const pieces: string[] = [];
  const began = performance.now();
  const response = await provider.complete(REQUEST, { signal, onText: (text) => pieces.push(text) });
  return { pieces, response, ms: performance.now() - began };
}

describe("paced replay", () => {
  it("records when each event arrived; a paced replay keeps the gaps, an unpaced one the same pieces", async () => {
    const live = await server();
    const file = join(store().home, "paced.jsonl");
    const recorder = new RecordingProvider(
      new OpenAIChatProvider({ apiKey: "sk-pace-0123456789", baseUrl: live.baseUrl, maxRetries: 0 }),
      file,
    );
    const recordedPieces: string[] = [];
    await recorder.complete(REQUEST, {
      signal: new AbortController().signal,
      onText: (text) => recordedPieces.push(text),
    });
    recorder.close();
    await live.close();

    const [call] = readRecording(file).calls;
    const { request, events } = call!.times;
    expect(request).toEqual(expect.any(Number));
    expect(events.every((time) => typeof time === "number")).toBe(true);
    // In order, and the gaps the server made are in the file (its clock, not ours: at least the pauses it took).
    const times = [request!, ...(events as number[])];
    for (let index = 1; index < times.length; index++) expect(times[index]!).toBeGreaterThanOrEqual(times[index - 1]!);
    const lastText = events.findLastIndex((_time, index) => call!.events[index]!.type === "text");
    const recordedGap = events[lastText]! - request!;
    expect(recordedGap).toBeGreaterThanOrEqual(300);

    const paced = await replay(new ReplayProvider(file, { pace: true }));
    expect(paced.pieces).toEqual(recordedPieces);
    expect(paced.response.text).toBe("slow and steady");
    // Never faster than the recorded gaps (less 25 ms of timer granularity); no upper bound is asserted.
    expect(paced.ms).toBeGreaterThanOrEqual(recordedGap - 25);

    const unpaced = await replay(new ReplayProvider(file));
    expect(unpaced.pieces).toEqual(recordedPieces);
    expect(unpaced.response).toEqual(paced.response);
  });

  it("a paced replay stops at once when its call is cancelled, with the pieces so far in order", async () => {
    const file = join(store().home, "hand-made.jsonl");
    const lines = [
      { type: "header", format_version: 1, provider: "openai" },
      { type: "request", call_index: 0, model: "gpt-test", provider: "openai", request: REQUEST, timestamp: 1_000 },
      { type: "event", call_index: 0, event_index: 0, event: { type: "text", text: "one " }, timestamp: 1_010 },
      // A minute later: the test cancels long before.
      { type: "event", call_index: 0, event_index: 1, event: { type: "text", text: "two" }, timestamp: 61_010 },
      {
        type: "event",
        call_index: 0,
        event_index: 2,
        event: { type: "response", response: { text: "one two", model: "gpt-test" } },
        timestamp: 61_011,
      },
      { type: "call_end", call_index: 0, event_count: 3 },
    ];
    writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    const controller = new AbortController();
    const pieces: string[] = [];
    const pending = new ReplayProvider(file, { pace: true }).complete(REQUEST, {
      signal: controller.signal,
      onText: (text) => {
        pieces.push(text);
        if (text === "one ") controller.abort("enough");
      },
    });
    await expect(pending).rejects.toMatchObject({ code: "cancelled" });
    expect(pieces).toEqual(["one "]);
  });

  it("OPENPROGRAM_REPLAY_PACE=1 asks for it, only beside OPENPROGRAM_REPLAY", () => {
    expect(recordingOptionsFromEnv({ OPENPROGRAM_REPLAY: "r.jsonl", OPENPROGRAM_REPLAY_PACE: "1" }, "/p")).toEqual({
      replay: "/p/r.jsonl",
      replayPace: true,
    });
    expect(recordingOptionsFromEnv({ OPENPROGRAM_REPLAY_PACE: "1" }, "/p")).toEqual({});
  });
});

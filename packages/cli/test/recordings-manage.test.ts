// `openprogram recordings list|prune` on a folder of recordings, and `--replay-pace` on the real binary.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRecording } from "@openprogram/session-context/recordings";
import { startFakeOpenAIServer } from "@openprogram/session-context/testing";
import { createCliHome, program, runCli, type CliHome } from "./helpers/cli.js";

let home: CliHome;
let project: string;

const REQUEST = { model: "gpt-test", messages: [{ role: "user", content: "hi" }] };

/** A recording of `calls` calls, each reporting 10 tokens in and 2 out. */
function recording(calls: number, model = "gpt-test"): string {
  const lines: unknown[] = [{ type: "header", format_version: 1, provider: "openai" }];
  for (let index = 0; index < calls; index++) {
    lines.push({ type: "request", call_index: index, model, provider: "openai", request: { ...REQUEST, model } });
    const response = { text: "hello", model, usage: { inputTokens: 10, outputTokens: 2 } };
    lines.push({ type: "event", call_index: index, event_index: 0, event: { type: "response", response } });
    lines.push({ type: "call_end", call_index: index, event_count: 1 });
  }
  return `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
}

function put(path: string, content: string): void {
  mkdirSync(dirname(join(project, path)), { recursive: true });
  writeFileSync(join(project, path), content);
}

beforeAll(() => {
  home = createCliHome();
  project = join(home.home, "project");
  put("test/__recordings__/used.jsonl", recording(2));
  put("test/__recordings__/quoted-single.jsonl", recording(1, "claude-test"));
  put("test/__recordings__/unused.jsonl", recording(1));
  put("test/story.test.ts", "const { runtime } = useRecording(\"used\");\nuseRecording('quoted-single');\n");
  // Not a recording (no header line): neither listed nor pruned.
  put("test/__recordings__/notes.jsonl", '{"note": "mine"}\n');
  // A recording cut short: listed with its problem.
  put("cut.jsonl", recording(1).split("\n").slice(0, -2).join("\n"));
  // Installed packages are not searched.
  put("node_modules/some-package/test/__recordings__/theirs.jsonl", recording(1));
});
afterAll(() => home.cleanup());

describe("openprogram recordings list", () => {
  it("lists every recording under the folder with calls, models, tokens, size and date", async () => {
    const listed = await runCli(["recordings", "list", project, "--json"], { env: home.env() });
    expect(listed.code).toBe(0);
    const { recordings } = JSON.parse(listed.stdout) as { recordings: Array<Record<string, unknown>> };
    expect(recordings.map((item) => item.path)).toEqual([
      "cut.jsonl",
      "test/__recordings__/quoted-single.jsonl",
      "test/__recordings__/unused.jsonl",
      "test/__recordings__/used.jsonl",
    ]);
    expect(recordings[3]).toMatchObject({
      calls: 2,
      models: ["gpt-test"],
      provider: "openai",
      input_tokens: 20,
      output_tokens: 4,
      size: recording(2).length,
      modified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
      problem: null,
    });
    expect(recordings[0]).toMatchObject({ calls: null, problem: expect.stringContaining("no call_end") as unknown });

    const table = await runCli(["recordings", "list"], { env: home.env(), cwd: project });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^FILE +CALLS +MODELS +TOKENS +SIZE +MODIFIED/);
    expect(table.stdout).toMatch(/^test\/__recordings__\/used\.jsonl +2 +gpt-test +20\/4 +\d+ B +\d{4}-/m);
    expect(table.stdout).toMatch(/^cut\.jsonl +cannot replay: call 0 has no call_end/m);

    const missing = await runCli(["recordings", "list", join(project, "no-such-folder")], { env: home.env() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no-such-folder is not a folder; give the folder to search for recordings");
  });
});

describe("openprogram recordings prune", () => {
  it("names the recordings no test beside them uses, removes nothing without --yes, then removes only those", async () => {
    const dry = await runCli(["recordings", "prune", project], { env: home.env() });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe("test/__recordings__/unused.jsonl\n");
    expect(dry.stderr).toContain("nothing removed");
    expect(existsSync(join(project, "test/__recordings__/unused.jsonl"))).toBe(true);

    const removed = await runCli(["recordings", "prune", project, "--yes", "--json"], { env: home.env() });
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ removed: ["test/__recordings__/unused.jsonl"] });
    expect(existsSync(join(project, "test/__recordings__/unused.jsonl"))).toBe(false);
    for (const kept of ["used", "quoted-single", "notes"])
      expect(existsSync(join(project, `test/__recordings__/${kept}.jsonl`)), kept).toBe(true);
    expect(existsSync(join(project, "node_modules/some-package/test/__recordings__/theirs.jsonl"))).toBe(true);
  });
});

describe("--replay-pace", () => {
  it("replays at the recorded pace: never faster than the recorded gaps; refused without --replay", async () => {
    const server = await startFakeOpenAIServer(() => ({
      chunks: ["A ", "slow ", "reply."],
      delayMs: 150,
      chunkDelayMs: 150,
    }));
    const file = join(home.home, "paced.jsonl");
    const target = `${program("summarize.mjs")}#summarize`;
    const input = ["--input", JSON.stringify({ text: "tides" })];
    try {
      const live = await runCli(["run", target, ...input, "--record", file], {
        env: home.env({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-pace-0123456789" }),
      });
      expect(live.code).toBe(0);
    } finally {
      await server.close();
    }
    const [call] = readRecording(file).calls;
    expect(Math.max(...(call!.times.events as number[])) - call!.times.request!).toBeGreaterThanOrEqual(400);
    // Stretched to 2.5 s between the request and the reply's end: longer than the whole unpaced run takes, so a
    // replay that ignored the pace would finish well inside it.
    const gap = 2500;
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const start = lines.find((line) => line.type === "request")!.timestamp as number;
    for (const line of lines)
      if (line.type === "event")
        line.timestamp = start + Math.round((gap * ((line.event_index as number) + 1)) / call!.events.length);
    writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);

    const began = performance.now();
    const paced = await runCli(["run", target, ...input, "--replay", file, "--replay-pace"], { env: home.env() });
    const took = performance.now() - began;
    expect(paced.stderr).not.toContain("error");
    expect(paced.stdout).toBe("A slow reply.\n");
    // A lower bound only (this test's clock, around the whole run): a loaded machine only adds to it.
    expect(took).toBeGreaterThanOrEqual(gap - 25);

    const alone = await runCli(["run", target, ...input, "--replay-pace"], { env: home.env() });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--replay-pace paces a replay: give the recording with --replay <file>");
  });
});

// Recording and replaying through child processes: a program whose middle step runs in a child (the process
// runner), on its own and under `run --isolate`. The child's calls go through the parent's recorder (never
// its own file, which would start the parent's recording anew) and replay from the parent's file, in order.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRecording } from "@openprogram/session-context/recordings";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { createCliHome, program, runCli, type CliHome } from "./helpers/cli.js";

let home: CliHome;
let server: FakeOpenAIServer | undefined;
const target = (): string => `${program("relay-parent.mjs")}#relay`;
const ORDER = ["parent first", "child one", "child two", "parent last"];

beforeAll(async () => {
  home = createCliHome();
  // Each reply names what it answers, so the output shows the order the calls were made in.
  server = await startFakeOpenAIServer((request) => {
    const last = request.json.messages!.at(-1)!;
    return { chunks: [`re ${last.content.split(":")[0]}`, ` (${last.content.split(": ")[1]})`] };
  });
});
afterAll(async () => {
  await server?.close();
  await home.cleanup();
});

function recordedPrompts(file: string): string[] {
  return readRecording(file).calls.map((call) => String(call.request.messages.at(-1)?.content).split(":")[0]!);
}

describe("recording through child processes", () => {
  it("records parent and child calls once each, in order, in and under run --isolate; replays them offline", async () => {
    const live = {
      OPENAI_BASE_URL: server!.baseUrl,
      OPENAI_API_KEY: "sk-relay-0123456789",
      OPENPROGRAM_MAX_RETRIES: "0",
    };
    const inProcess = join(home.home, "relay.jsonl");
    const isolated = join(home.home, "relay-isolated.jsonl");
    const args = ["run", target(), "--input", JSON.stringify({ topic: "tides" })];

    const recorded = await runCli([...args, "--record", inProcess], { env: home.env(live) });
    expect(recorded.stderr).not.toContain("error");
    expect(recorded.stdout).toBe(
      "re parent first (tides) | re child one (tides) | re child two (tides) | re parent last (tides)\n",
    );
    const recordedIsolated = await runCli([...args, "--isolate", "--record", isolated], { env: home.env(live) });
    expect(recordedIsolated.stderr).not.toContain("error");
    expect(recordedIsolated.stdout).toBe(recorded.stdout);
    expect(server!.requests).toHaveLength(8);
    await server!.close();
    server = undefined;

    for (const file of [inProcess, isolated]) {
      const lines = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string });
      // One header, then every call exactly once, numbered in the order made.
      expect(lines.filter((line) => line.type === "header")).toHaveLength(1);
      expect(
        lines
          .filter((line) => line.type === "request")
          .map((line) => (line as unknown as { call_index: number }).call_index),
      ).toEqual([0, 1, 2, 3]);
      expect(recordedPrompts(file)).toEqual(ORDER);
    }

    // No provider configured and nothing listening: the child's calls are answered from the parent's file, in order.
    for (const [file, extra] of [
      [inProcess, []],
      [isolated, ["--isolate"]],
      [inProcess, ["--isolate"]],
    ] as const) {
      const replayed = await runCli([...args, ...extra, "--replay", file], { env: home.env() });
      expect(replayed.stderr).not.toContain("error");
      expect(replayed.code).toBe(0);
      expect(replayed.stdout).toBe(recorded.stdout);
    }
  });

  it("the child's call is compared with the recorded call after the parent's: a change there names call 1", async () => {
    const file = join(home.home, "relay.jsonl");
    const edited = join(home.home, "relay-edited.jsonl");
    // The recording says the child's first call asked about rivers; the program asks about tides.
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const line of lines) {
      if (line.type !== "request" || line.call_index !== 1) continue;
      const messages = (line.request as { messages: Array<{ content: string }> }).messages;
      messages[messages.length - 1]!.content = "child one: rivers";
    }
    writeFileSync(edited, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    for (const extra of [[], ["--isolate"]]) {
      const replayed = await runCli(
        ["run", target(), "--input", JSON.stringify({ topic: "tides" }), ...extra, "--replay", edited],
        { env: home.env() },
      );
      expect(replayed.code).toBe(1);
      expect(replayed.stderr).toMatch(
        /replay mismatch at call 1, field messages\[\d\]\.content: recorded "child one: rivers", incoming "child one: tides"/,
      );
    }
  });
});

// Durable turns under replay: a turn killed (SIGKILL) mid-way while replaying resumes with --replay at the
// right call: the calls the session's own record answers (a reused nested call's two, a reused exec's one)
// are not asked of the recording again, so the next call meets the recorded call it was; same output.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { createCliHome, program, runCli, sessionIdFrom, type CliHome } from "./helpers/cli.js";

let home: CliHome;
let server: FakeOpenAIServer | undefined;
const target = (): string => `${program("crash-story.mjs")}#story`;
const INPUT = ["--input", JSON.stringify({ topic: "tides" })];

beforeAll(async () => {
  home = createCliHome();
  server = await startFakeOpenAIServer((request) => {
    const asked = request.json.messages!.at(-1)!.content;
    return { chunks: [`[${asked.split(":")[0]}]`, " done"] };
  });
});
afterAll(async () => {
  await server?.close();
  await home.cleanup();
});

describe("resuming a turn under --replay", () => {
  it("a turn killed mid-way while replaying resumes with --replay: no mismatch, the same output", async () => {
    const recording = join(home.home, "story.jsonl");
    const live = await runCli(["run", target(), ...INPUT, "--record", recording], {
      env: home.env({ OPENAI_BASE_URL: server!.baseUrl, OPENAI_API_KEY: "sk-story-0123456789" }),
    });
    expect(live.stderr).not.toContain("error");
    expect(live.stdout).toBe("[write] done\n");
    expect(server!.requests).toHaveLength(4);
    await server!.close();
    server = undefined;

    for (const isolate of [[], ["--isolate"]]) {
      // Replaying, the process kills itself after the third call (gather's two, then the outline).
      const mark = join(home.home, `crashed-${isolate.length}`);
      const crashed = await runCli(["run", target(), ...INPUT, ...isolate, "--replay", recording], {
        env: home.env({ CRASH_MARK: mark }),
      });
      expect(crashed.code).not.toBe(0);
      const sessionId = sessionIdFrom(crashed.stderr);

      // Resumed under the same recording: gather (2 calls) and the outline (1) come from the session's record;
      // the fourth call is compared with the recording's fourth.
      const resumed = await runCli(["resume", sessionId, "--replay", recording], {
        env: home.env({ CRASH_MARK: mark }),
      });
      expect(resumed.stderr).not.toContain("replay_mismatch");
      expect(resumed.stderr).not.toContain("error");
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toBe(live.stdout);
    }
  });
});

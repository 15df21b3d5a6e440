import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUMMARIZE_CONVERSATION_DOC } from "@openprogram/session-context/compaction";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { runCli, useCliHome } from "./helpers/cli.js";

/** Sessions written by Python OpenProgram's own store; compacted_shared is one it compacted. */
const PYTHON_SESSIONS_V2 = fileURLToPath(
  new URL("../../session-context/test/fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url),
);

const home = useCliHome({ from: PYTHON_SESSIONS_V2 });
let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer((request) =>
    request.json.messages?.[0]?.content === SUMMARIZE_CONVERSATION_DOC
      ? "Chapters one to four are drafted."
      : "Notes for chapter six.",
  );
});
afterAll(() => server.close());

const env = (): Record<string, string> =>
  home.env({ OPENAI_BASE_URL: server.baseUrl, OPENPROGRAM_MODEL: "gpt-4o-mini", OPENPROGRAM_MAX_RETRIES: "0" });

describe("openprogram sessions compact", () => {
  it("compacts Python's compacted session again, says so on stderr, and the next chat reads the summary", async () => {
    const result = await runCli(["sessions", "compact", "compacted_shared", "--keep-recent-tokens", "30", "--json"], {
      env: env(),
    });
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ ok: true, session_id: "compacted_shared", covered: 8, kept: 2 });
    expect(printed.summary_id).toMatch(/^summary_[0-9a-f]{10}$/);
    expect(result.stderr).toContain("compacting session compacted_shared…\n");
    expect(result.stderr).toContain(
      `compacted session compacted_shared: summary ${String(printed.summary_id)} stands for 8 earlier nodes, 2 kept verbatim (`,
    );
    const summariser = server.requests.at(-1)?.json.messages?.[1]?.content ?? "";
    expect(summariser).toContain("<previous-summary>\nsummary text\n</previous-summary>");

    const chat = await runCli(["chat", "--session", "compacted_shared"], { env: env(), input: "Chapter six?\n" });
    expect(chat.code).toBe(0);
    expect(server.requests.at(-1)?.json.messages).toEqual([
      { role: "assistant", content: "[Previous conversation summary]\nChapters one to four are drafted." },
      { role: "user", content: "Draft notes for chapter five" },
      { role: "assistant", content: "Notes for chapter five: point A, point B." },
      { role: "user", content: "Chapter six?" },
    ]);
  });

  it("refuses a session that does not exist, and one with nothing to compact writes nothing", async () => {
    const missing = await runCli(["sessions", "compact", "no_such_session"], { env: env() });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/no_such_session/);
    const nothing = await runCli(["sessions", "compact", "archived_shared", "--json"], { env: env() });
    expect(nothing.code).toBe(0);
    expect(JSON.parse(nothing.stdout)).toMatchObject({ ok: true, summary_id: null, covered: 0 });
    expect(nothing.stderr).toContain("nothing to compact in session archived_shared");
  });
});

import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  createLogSink,
  humanLogLine,
  jsonLogLine,
  redactSecrets,
  resolveLogFormat,
  type LogEntry,
} from "../src/index.js";
import { closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

const TOKEN = "very-secret-token-abcdef0123456789";
const PROMPT = "PROMPT-TEXT-that-must-never-be-logged";

describe("log lines", () => {
  it("are one JSON object per line with start, connection and turn events, and never the prompt or the token", async () => {
    const { runtime } = scriptedRuntime([
      `REPLY mentioning ${PROMPT}`,
      { error: { status: 500, message: `bad ${PROMPT}` } },
    ]);
    const served = await startDispatcher({ runtime, token: TOKEN });
    const client = await served.connect({}, `?token=${TOKEN}`);
    client.send({ type: "chat", text: PROMPT });
    const session = await client.next("session");
    await client.next("turn_done");
    client.send({ type: "chat", session_id: session.session_id, text: `${PROMPT} again` });
    await client.next("turn_failed");
    await client.refused({ type: "chat", text: 5 });
    client.close();
    await client.waitClosed();
    await served.dispatcher.close();

    const lines = served.logs.map(jsonLogLine);
    const text = lines.join("");
    expect(text).not.toContain(PROMPT);
    expect(text).not.toContain(TOKEN);
    for (const line of lines) {
      expect(line.endsWith("\n")).toBe(true);
      expect(line.slice(0, -1)).not.toContain("\n");
      const parsed = JSON.parse(line) as LogEntry;
      expect(parsed.time).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(["info", "warn", "error"]).toContain(parsed.level);
      expect(parsed.event).toMatch(/^[a-z_]+$/);
    }
    const events = served.logs.map((entry) => entry.event);
    expect(events).toEqual(
      expect.arrayContaining([
        "start",
        "connection_open",
        "turn_start",
        "turn_end",
        "frame_rejected",
        "connection_close",
        "shutdown_start",
        "shutdown_complete",
      ]),
    );
    const ends = served.logs.filter((entry) => entry.event === "turn_end");
    expect(ends[0]).toMatchObject({ session_id: session.session_id, kind: "chat", outcome: "done" });
    expect(typeof ends[0]?.duration_ms).toBe("number");
    expect(ends[1]).toMatchObject({ level: "warn", outcome: "failed", error_code: "provider_error" });
    const start = served.logs.find((entry) => entry.event === "start");
    expect(start).toMatchObject({
      token: "required",
      sessions_root: served.store.root,
      provider: "scripted (scripted), given in code",
    });
  });
});

describe("formats", () => {
  const entry: LogEntry = {
    time: "2025-01-02T03:04:05.678Z",
    level: "info",
    event: "turn_end",
    session_id: "session_1",
    duration_ms: 12.5,
    note: "two words",
  };

  it("renders JSON lines and readable lines", () => {
    expect(JSON.parse(jsonLogLine(entry))).toEqual(entry);
    expect(humanLogLine(entry)).toBe(
      '03:04:05.678 INFO  turn_end session_id=session_1 duration_ms=12.5 note="two words"\n',
    );
    const banner = humanLogLine({
      time: entry.time,
      level: "info",
      event: "start",
      url: "http://127.0.0.1:8787",
      version: "0.1.0",
      programs: ["research"],
      shutdown_grace_ms: 10000,
    });
    expect(banner).toContain("OpenProgram dispatcher 0.1.0 listening on http://127.0.0.1:8787");
    expect(banner).toContain("programs:        research");
  });

  it("auto picks JSON when the stream is not a terminal, readable lines on a terminal", () => {
    expect(resolveLogFormat("auto", { write: () => true })).toBe("json");
    expect(resolveLogFormat("auto", { write: () => true, isTTY: true })).toBe("human");
    expect(resolveLogFormat("json", { write: () => true, isTTY: true })).toBe("json");
    const written: string[] = [];
    createLogSink({ stream: { write: (text: string) => written.push(text), isTTY: false } })(entry);
    expect(JSON.parse(written[0] as string)).toEqual(entry);
  });

  it("redacts secrets anywhere in an entry", () => {
    expect(redactSecrets({ a: "x tok y", b: ["tok"], c: { d: "tok" }, n: 1 }, ["tok"])).toEqual({
      a: "x [redacted] y",
      b: ["[redacted]"],
      c: { d: "[redacted]" },
      n: 1,
    });
  });
});

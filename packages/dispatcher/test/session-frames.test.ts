import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agenticFunction } from "@openprogram/session-context";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { asError, asFrame, closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

async function withTwoSessions() {
  const served = await startDispatcher({ runtime: scriptedRuntime(["one", "two"]).runtime });
  const client = await served.connect();
  const ids: string[] = [];
  for (const text of ["first session", "second session"]) {
    client.send({ type: "chat", text });
    ids.push((await client.next("session")).session_id);
    await client.next("turn_done");
  }
  return { served, client, ids: ids as [string, string] };
}

describe("session frames", () => {
  it("list_sessions returns the registry: title, preview, status, updated", async () => {
    const { client, ids } = await withTwoSessions();
    const listed = asFrame(await client.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(listed.sessions.map((session) => session.id).sort()).toEqual([...ids].sort());
    const first = listed.sessions.find((session) => session.id === ids[0]);
    expect(first).toMatchObject({ status: "idle", source: "web", preview: "first session" });
    expect(typeof first?.updated_at).toBe("number");
    const limited = asFrame(await client.request({ type: "list_sessions", limit: 1 }, "sessions"), "sessions");
    expect(limited.sessions).toHaveLength(1);
  });

  it("list_sessions judges a running session by its lease: its process killed, it is interrupted; archived on request", async () => {
    const { served, client, ids } = await withTwoSessions();
    // A process that began a turn of a session of this store, then was killed -9 in the middle of it.
    const script = `import { SessionDB } from "@openprogram/session-context/store";
const db = new SessionDB({ root: process.argv[1] });
await db.createSession({ id: "killed_mid_turn", source: "cli" });
await db.beginTurn("killed_mid_turn", "turn_0123456789");
await db.flushRegistry("killed_mid_turn");
process.stdout.write("began\\n");
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script, served.store.root], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    const statusOf = async (): Promise<unknown> => {
      const listed = asFrame(await client.request({ type: "list_sessions" }, "sessions"), "sessions");
      return listed.sessions.find((session) => session.id === "killed_mid_turn")?.status;
    };
    expect(await statusOf()).toBe("running");
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    expect(await statusOf()).toBe("interrupted");
    const detail = asFrame(
      await client.request({ type: "get_session", session_id: "killed_mid_turn" }, "session_detail"),
      "session_detail",
    );
    expect(detail.session.status).toBe("interrupted");

    client.send({ type: "archive_session", session_id: ids[0], archived: true });
    await client.next("session_archived");
    const shown = asFrame(await client.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(shown.sessions.map((session) => session.id)).not.toContain(ids[0]);
    const all = asFrame(
      await client.request({ type: "list_sessions", include_archived: true }, "sessions"),
      "sessions",
    );
    expect(all.sessions.find((session) => session.id === ids[0])).toMatchObject({ archived: true });
  });

  it("titles a session from its first message or program call; later messages change the preview, not the title", async () => {
    const echo = agenticFunction({ name: "echo", doc: "Echo the text." }, async ({ text }: { text: string }) => text);
    const served = await startDispatcher({
      runtime: scriptedRuntime(["one", "two", "three"]).runtime,
      programs: { echo },
    });
    const client = await served.connect();
    client.send({ type: "chat", text: "\nPlan my week\nwith details" });
    const id = (await client.next("session")).session_id;
    await client.next("turn_done");
    for (const text of ["And Tuesday?", "And Friday?"]) {
      client.send({ type: "chat", session_id: id, text });
      await client.next("turn_done");
    }
    const runner = await served.connect();
    runner.send({ type: "run", program: "echo", input: { text: "hi" } });
    const runId = (await runner.next("session")).session_id;
    await runner.next("turn_done");
    const listed = asFrame(await client.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(listed.sessions.find((session) => session.id === id)).toMatchObject({
      title: "Plan my week",
      preview: "And Friday?",
    });
    expect(listed.sessions.find((session) => session.id === runId)?.title).toBe('echo(text="hi")');
    // meta.json holds it, where Python reads it.
    expect((await served.store.db.readMeta(id)).title).toBe("Plan my week");
  });

  it("get_session returns meta, conversation and every node", async () => {
    const { client, ids } = await withTwoSessions();
    const detail = asFrame(
      await client.request({ type: "get_session", session_id: ids[0] }, "session_detail"),
      "session_detail",
    );
    expect(detail).toMatchObject({
      session_id: ids[0],
      busy: false,
      session: { id: ids[0] },
      meta: { id: ids[0] },
      problems: [],
    });
    expect(detail.conversation.map((node) => node.output)).toEqual(["first session", "one"]);
    expect(detail.nodes).toHaveLength(2);
    // The scripted replies report no token counts: one chat turn, one call, counted as without usage.
    expect(detail.usage).toMatchObject({
      sessionId: ids[0],
      total: { calls: 1, callsWithoutUsage: 1, inputTokens: 0 },
      turns: [{ label: "chat: first session", calls: 1 }],
    });
    const missing = asError(
      await client.request({ type: "get_session", session_id: "session_ffffffffff" }, "session_detail"),
    );
    expect(missing.code).toBe("session_not_found");
  });

  it("subscribe needs an existing session; unsubscribe stops the events", async () => {
    const { served, client, ids } = await withTwoSessions();
    const watcher = await served.connect();
    const missing = asError(
      await watcher.request({ type: "subscribe", session_id: "session_ffffffffff" }, "subscribed"),
    );
    expect(missing.code).toBe("session_not_found");
    expect(await watcher.request({ type: "subscribe", session_id: ids[1] }, "subscribed")).toMatchObject({
      type: "subscribed",
      status: "idle",
      busy: false,
    });
    expect(await watcher.request({ type: "unsubscribe", session_id: ids[1] }, "unsubscribed")).toEqual({
      type: "unsubscribed",
      session_id: ids[1],
    });
    client.send({ type: "chat", session_id: ids[1], text: "more" });
    await client.next("turn_failed");
    expect(
      watcher.frames.filter(
        (frame) =>
          "session_id" in frame &&
          frame.session_id === ids[1] &&
          frame.type !== "subscribed" &&
          frame.type !== "unsubscribed",
      ),
    ).toEqual([]);
  });

  it("a subscriber of an existing session sees another client's turn in it", async () => {
    const { served, client, ids } = await withTwoSessions();
    const watcher = await served.connect();
    await watcher.request({ type: "subscribe", session_id: ids[0] }, "subscribed");
    client.send({ type: "chat", session_id: ids[0], text: "third" });
    expect(await watcher.next("session")).toMatchObject({ session_id: ids[0], created: false });
    expect((await watcher.next("turn_failed")).error.code).toBe("script_exhausted");
  });

  it("delete_session removes the session from disk and tells its subscribers", async () => {
    const { served, client, ids } = await withTwoSessions();
    const watcher = await served.connect();
    await watcher.request({ type: "subscribe", session_id: ids[0] }, "subscribed");
    client.send({ type: "delete_session", session_id: ids[0] });
    expect(await client.next("session_deleted")).toEqual({ type: "session_deleted", session_id: ids[0] });
    expect(await watcher.next("session_deleted")).toEqual({ type: "session_deleted", session_id: ids[0] });
    expect(existsSync(join(served.store.root, ids[0]))).toBe(false);
    expect(asError(await client.request({ type: "delete_session", session_id: ids[0] }, "session_deleted")).code).toBe(
      "session_not_found",
    );
    const listed = asFrame(await client.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(listed.sessions.map((session) => session.id)).toEqual([ids[1]]);
  });

  it("archive_session archives and unarchives as Python does, tells the subscribers, and list_sessions hides it", async () => {
    const { served, client, ids } = await withTwoSessions();
    const watcher = await served.connect();
    await watcher.request({ type: "subscribe", session_id: ids[0] }, "subscribed");
    client.send({ type: "archive_session", session_id: ids[0] });
    const archived = { type: "session_archived", session_id: ids[0], archived: true };
    expect(await client.next("session_archived")).toEqual(archived);
    expect(await watcher.next("session_archived")).toEqual(archived);
    const meta = (): Record<string, unknown> =>
      JSON.parse(readFileSync(join(served.store.root, ids[0], "meta.json"), "utf8")) as Record<string, unknown>;
    expect(meta().archived).toBe(true);
    const listed = asFrame(await client.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(listed.sessions.map((session) => session.id)).toEqual([ids[1]]);

    client.send({ type: "archive_session", session_id: ids[0], archived: false });
    expect(await client.next("session_archived")).toEqual({ ...archived, archived: false });
    expect(meta().archived).toBe(false);
    const again = asFrame(await client.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(again.sessions.map((session) => session.id).sort()).toEqual([...ids].sort());

    // Bad input: a clear error, nothing changed.
    const wrong = asError(
      await client.request({ type: "archive_session", session_id: ids[0], archived: "yes" }, "session_archived"),
    );
    expect(wrong).toMatchObject({ code: "invalid_input", action: "archive_session" });
    expect(wrong.message).toContain("archive_session.archived must be true or false");
    expect(meta().archived).toBe(false);
    expect(
      asError(await client.request({ type: "archive_session", session_id: "session_nowhere" }, "session_archived"))
        .code,
    ).toBe("session_not_found");
  });

  it("sends hello with the protocol version on connect", async () => {
    const served = await startDispatcher({ runtime: null });
    const client = await served.connect();
    const hello = asFrame(client.frames[0] as NonNullable<(typeof client.frames)[0]>, "hello");
    expect(hello).toMatchObject({ protocol_version: 1, server: "openprogram-dispatcher" });
    expect(hello.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

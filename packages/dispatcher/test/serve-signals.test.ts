import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "@openprogram/session-context/store";
import { afterEach, describe, expect, it } from "vitest";
import { asError, closeAll, onCleanup, serveInChild, TestClient, type ServedChild } from "./helpers.js";

afterEach(closeAll);

const CHILD = fileURLToPath(new URL("./fixtures/serve-child.mjs", import.meta.url));
const TOKEN = "sigterm-test-token-0123456789";

/** Starts `serve()` from dist/ in a real child process, configured by its environment only. */
function serveChild(graceMs: number): Promise<ServedChild & { wsUrl: string }> {
  return serveInChild(CHILD, {
    OPENPROGRAM_TOKEN: TOKEN,
    OPENPROGRAM_PROVIDER: "none",
    OPENPROGRAM_SHUTDOWN_GRACE_MS: String(graceMs),
  });
}

describe("serve() and signals (built package, real child process)", () => {
  it("on SIGTERM refuses new turns, cancels the running one after the grace period, commits it, closes sockets with 1001 and exits 0", async () => {
    const served = await serveChild(5_000);
    const running = await TestClient.connect(`${served.wsUrl}?token=${TOKEN}`);
    const other = await TestClient.connect(served.wsUrl, { headers: { Authorization: `Bearer ${TOKEN}` } });
    onCleanup(() => {
      running.close();
      other.close();
    });
    running.send({ type: "run", program: "wait_for_stop" });
    const session = await running.next("session");
    await running.next("node", (frame) => frame.node.role === "code");

    served.child.kill("SIGTERM");
    await served.event("shutdown_start");
    const refused = asError(
      await other.request({ type: "run", program: "wait_for_stop", client_msg_id: "late" }, "session"),
    );
    expect(refused).toMatchObject({ code: "shutting_down", ref: "late" });

    const failed = await running.next("turn_failed");
    expect(failed.session_id).toBe(session.session_id);
    expect(failed.error.code).toBe("cancelled");
    expect(failed.error.message).toContain("shutting down");
    expect(await running.waitClosed()).toEqual({ code: 1001, reason: "server shutting down: received SIGTERM" });
    expect((await other.waitClosed()).code).toBe(1001);
    expect(await served.exited).toEqual({ code: 0, signal: null });

    const db = openStore({ root: join(served.home, "sessions") });
    const sessionId = session.session_id;
    const nodes = await db.loadNodes(sessionId);
    expect(nodes).toHaveLength(1);
    expect(nodes[0]).toMatchObject({
      name: "wait_for_stop",
      metadata: { status: "cancelled", error: { code: "cancelled" } },
    });
    expect((await db.gitLog(sessionId))[0]?.message).toBe(`turn ${session.turn_id} (web)`);
    expect((await db.getSession(sessionId))?.status).toBe("idle");

    const entries = served.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.map((entry) => entry.event)).toEqual(
      expect.arrayContaining(["start", "signal", "shutdown_start", "turns_cancelled", "turn_end", "shutdown_complete"]),
    );
    expect(entries.find((entry) => entry.event === "shutdown_complete")).toMatchObject({
      cancelled_turns: 1,
      abandoned_turns: 0,
    });
    expect(served.lines.join("\n")).not.toContain(TOKEN);
  });

  it("on SIGINT with nothing running exits 0 at once", async () => {
    const served = await serveChild(60_000);
    served.child.kill("SIGINT");
    expect(await served.exited).toEqual({ code: 0, signal: null });
    expect(served.lines.map((line) => (JSON.parse(line) as { event: string }).event)).toEqual([
      "start",
      "signal",
      "shutdown_start",
      "shutdown_complete",
    ]);
  });
});

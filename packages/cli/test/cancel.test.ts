import { describe, expect, it } from "vitest";
import { collect, program, readRequestLog, sessionIdFrom, spawnCli, waitFor, useCliHome } from "./helpers/cli.js";

const home = useCliHome();

describe("Ctrl-C (SIGINT) during a run", () => {
  it("cancels through the context's signal: running nodes are recorded cancelled, the turn is committed, exit 130", async () => {
    // The model reply never comes in time, so both calls are running when Ctrl-C arrives.
    const { env, log } = home.scripted([{ reply: "too late", delayMs: 120_000 }]);
    const child = spawnCli(["run", program("slow-pipeline.mjs"), "--json"], { env: home.env(env) });
    const run = collect(child);
    await waitFor(() => readRequestLog(log).length === 1, "the model request to be sent");
    child.kill("SIGINT");
    const result = await run;

    expect(result.code).toBe(130);
    expect(result.stderr).toContain("Ctrl-C: cancelling the turn");
    expect(result.stderr).toMatch(/^error \[cancelled\]: Cancelled: interrupted by SIGINT$/m);
    const output = JSON.parse(result.stdout) as { ok: boolean; session_id: string; error: { code: string } };
    expect(output).toMatchObject({ ok: false, error: { code: "cancelled" } });
    expect(sessionIdFrom(result.stderr)).toBe(output.session_id);

    const nodes = await home.db.loadNodes(output.session_id);
    expect(nodes.map((node) => [node.role, node.name, node.metadata.status])).toEqual([
      ["code", "report", "cancelled"],
      ["code", "draft", "cancelled"],
      ["llm", "scripted", "cancelled"],
    ]);
    const commits = await home.db.gitLog(output.session_id);
    expect(commits.map((commit) => commit.message)).toEqual([
      expect.stringMatching(/^turn turn_[0-9a-f]{10} \(cli\)$/),
      "session init",
    ]);
    // The committed tree holds the cancelled nodes: nothing is left running or uncommitted.
    const record = (await home.db.listSessions()).find((entry) => entry.id === output.session_id);
    expect(record?.status).toBe("idle");
  });

  it("a second Ctrl-C exits at once when the program ignores its signal", async () => {
    const child = spawnCli(["run", program("stubborn.mjs")], { env: home.env() });
    const run = collect(child);
    await waitFor(() => run.output().stderr.includes("stubborn: waiting"), "the program to start");
    child.kill("SIGINT");
    await waitFor(() => run.output().stderr.includes("cancelling the turn"), "the first Ctrl-C to be acknowledged");
    child.kill("SIGINT");
    const result = await run;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain("SIGINT again: exiting without waiting");
  });

  it("SIGTERM cancels the same way and exits 143", async () => {
    const { env, log } = home.scripted([{ reply: "too late", delayMs: 120_000 }]);
    const child = spawnCli(["run", program("slow-pipeline.mjs")], { env: home.env(env) });
    const run = collect(child);
    await waitFor(() => readRequestLog(log).length === 1, "the model request to be sent");
    child.kill("SIGTERM");
    const result = await run;
    expect(result.code).toBe(143);
    const nodes = await home.db.loadNodes(sessionIdFrom(result.stderr));
    expect(nodes.every((node) => node.metadata.status === "cancelled")).toBe(true);
  });
});

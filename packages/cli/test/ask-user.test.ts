import { describe, expect, it } from "vitest";
import type { SessionNode } from "@openprogram/session-context";
import { program, runCli, sessionIdFrom, spawnCli, collect, useCliHome } from "./helpers/cli.js";
import { runCliInPty } from "./helpers/pty.js";

const home = useCliHome();

async function askNode(sessionId: string): Promise<SessionNode> {
  const nodes = await home.db.loadNodes(sessionId);
  const node = nodes.find((entry) => entry.name === "ask_user");
  if (!node) throw new Error(`no ask_user node in ${sessionId}: ${JSON.stringify(nodes.map((entry) => entry.name))}`);
  expect(node.caller).toBe(nodes.find((entry) => entry.name === "pick_colour")?.id);
  return node;
}

describe("askUser from the command line", () => {
  it("--answers (one answer per line) answers in order; the question and answer are recorded on the ask_user node", async () => {
    const answers = home.file("answers.txt", "2\n");
    const result = await runCli(["run", program("ask-choice.mjs"), "--answers", answers], { env: home.env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("chart in green\n");
    const node = await askNode(sessionIdFrom(result.stderr));
    expect(node.input).toBe("Which colour should the chart use?");
    expect(node.output).toBe("green");
    expect(node.metadata).toMatchObject({ kind: "ask_user", status: "answered", choices: ["red", "green", "blue"] });
  });

  it("--answers as a JSON array can decline: exit 1, recorded declined", async () => {
    const answers = home.file("decline.json", JSON.stringify([{ decline: true, reason: "not my call" }]));
    const result = await runCli(["run", program("ask-choice.mjs"), "--answers", answers], { env: home.env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error \[user_declined\]: The user declined to answer: Which colour/m);
    const node = await askNode(sessionIdFrom(result.stderr));
    expect(node.metadata).toMatchObject({ status: "declined", reason: "not my call" });
  });

  it("an answer outside the choices fails with invalid_answer, recorded", async () => {
    const answers = home.file("purple.txt", "purple\n");
    const result = await runCli(["run", program("ask-choice.mjs"), "--answers", answers], { env: home.env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error \[invalid_answer\]: "purple" is not one of the choices/m);
    expect((await askNode(sessionIdFrom(result.stderr))).metadata.status).toBe("failed");
  });

  it("no terminal and no --answers: the question fails with ask_user_unavailable (exit 2), recorded, and the process never waits on stdin", async () => {
    // stdin stays open (never ended): the CLI must not read it. A continued session keeps the failed question.
    expect(
      (
        await runCli(["run", program("pure-code.mjs"), "--session", "asks-later", "--input", '{"text": "x"}'], {
          env: home.env(),
        })
      ).code,
    ).toBe(0);
    const child = spawnCli(["run", program("ask-choice.mjs"), "--session", "asks-later"], { env: home.env() });
    const result = await collect(child, 60_000);
    child.stdin.destroy();
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error \[ask_user_unavailable\]: askUser\("Which colour should the chart use\?"\) has no asker: .*--answers <file>/m,
    );
    const node = await askNode(sessionIdFrom(result.stderr));
    expect(node.metadata).toMatchObject({ status: "failed", error: { code: "ask_user_unavailable" } });
    expect(node.output).toBeNull();
  });

  it("on a terminal it prompts with numbered choices, takes the typed number, and shows progress", async () => {
    const result = await runCliInPty(["run", program("ask-choice.mjs")], {
      env: home.env(),
      dir: home.home,
      steps: [{ expect: "Choose a number", send: "3\r" }],
    });
    expect(result.timed_out).toBe(false);
    expect(result.pending_step).toBeNull();
    expect(result.exit_code).toBe(0);
    expect(result.output).toContain("? Which colour should the chart use?");
    expect(result.output).toMatch(/1\. red\r?\n {2}2\. green\r?\n {2}3\. blue/);
    expect(result.output).toContain("chart in blue");
    // stderr is a terminal: one progress line per finished call.
    expect(result.output).toMatch(/✓ pick_colour {2}completed {2}\d+\.\d\ds/);
    const sessionId = sessionIdFrom(result.output.replace(/\r/g, ""));
    const node = await askNode(sessionId);
    expect(node.output).toBe("blue");
    expect(node.metadata.status).toBe("answered");
  });

  it("on a terminal, end of input (Ctrl-D) declines instead of hanging", async () => {
    const result = await runCliInPty(["run", program("ask-choice.mjs")], {
      env: home.env(),
      dir: home.home,
      steps: [{ expect: "Choose a number", send: "\u0004" }],
    });
    expect(result.timed_out).toBe(false);
    expect(result.exit_code).toBe(1);
    expect(result.output).toContain("error [user_declined]");
    expect((await askNode(sessionIdFrom(result.output.replace(/\r/g, "")))).metadata).toMatchObject({
      status: "declined",
      reason: "end of input",
    });
  });

  it("on a terminal, Ctrl-C while a question waits stops the turn and exits 130; the question stays waiting on disk", async () => {
    const result = await runCliInPty(["run", program("ask-choice.mjs")], {
      env: home.env(),
      dir: home.home,
      steps: [{ expect: "Choose a number", send: "\u0003" }],
    });
    expect(result.timed_out).toBe(false);
    expect(result.exit_code).toBe(130);
    expect(result.output).toContain("error [cancelled]: Cancelled: interrupted by SIGINT");
    const sessionId = sessionIdFrom(result.output.replace(/\r/g, ""));
    // The question outlives the process (`openprogram answer` continues the turn); the call it interrupted is cancelled.
    expect((await askNode(sessionId)).metadata.status).toBe("waiting");
    const nodes = await home.db.loadNodes(sessionId);
    expect(nodes.find((node) => node.name === "pick_colour")?.metadata.status).toBe("cancelled");
    expect((await home.db.getSession(sessionId))?.status).toBe("needs_input");
    expect(await home.db.gitLog(sessionId)).toHaveLength(2);
  });
});

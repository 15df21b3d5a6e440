// The project's demo (`npm run demo`: scripts/bootstrap.mjs runs `openprogram research <task>` on the scripted
// replies in packages/research/demo/replies.json when no model is configured) works offline: here in a network
// namespace with no network at all where the machine allows one. Its replies can also be expressed as a
// recording: recorded once through the scripted replies, replayed with no provider configured, the same paper.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readRecording } from "@openprogram/session-context/recordings";
import { readFileTree } from "@openprogram/session-context/testing";
import { CLI_BIN, sessionIdFrom, useCliHome } from "./helpers/cli.js";

const DEMO_REPLIES = fileURLToPath(new URL("../../research/demo/replies.json", import.meta.url));
const TASK = "Survey how to make LLM agents reliable, then propose and write up one idea.";
/** `unshare -rn`: no network at all (null: not allowed on this machine; the run is then only unconfigured). */
const OFFLINE_PREFIX = spawnSync("unshare", ["-rn", "true"]).status === 0 ? ["unshare", "-rn"] : null;

const home = useCliHome();

function openprogram(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [file, ...rest] = [...(OFFLINE_PREFIX ?? []), process.execPath, CLI_BIN, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(file!, rest, { cwd: home.home, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the demo, offline", () => {
  it("runs the demo's command with no network; its replies recorded once replay to the same paper", async () => {
    const demoEnv = home.env({ OPENPROGRAM_PROVIDER: "scripted", OPENPROGRAM_SCRIPT: DEMO_REPLIES });
    const recording = join(home.home, "demo.jsonl");
    const scripted = await openprogram(
      ["research", TASK, "--work-dir", join(home.home, "scripted"), "--record", recording],
      demoEnv,
    );
    expect(scripted.stderr).not.toContain("error [");
    expect(scripted.code).toBe(0);
    expect(scripted.stderr).toMatch(/^status: completed/m);
    const calls = readRecording(recording).calls;
    // Every canned reply is used once: one recorded call each.
    expect(calls).toHaveLength((JSON.parse(readFileSync(DEMO_REPLIES, "utf8")) as unknown[]).length);

    // No provider configured at all: the recording answers every stage, in order.
    const replayed = await openprogram(
      ["research", TASK, "--work-dir", join(home.home, "replayed"), "--replay", recording],
      home.env(),
    );
    expect(replayed.stderr).not.toContain("error [");
    expect(replayed.code).toBe(0);
    expect(sessionIdFrom(replayed.stderr)).not.toBe(sessionIdFrom(scripted.stderr));
    const paper = readFileTree(join(home.home, "scripted"));
    expect(paper["paper/paper.md"]).toContain("[canned demo output]");
    expect(readFileTree(join(home.home, "replayed"))).toEqual(paper);
  });
});

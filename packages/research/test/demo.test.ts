import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, ScriptedProvider } from "@openprogram/session-context/runtime";
import { createTempStore, removeTree, type TempStore } from "@openprogram/session-context/testing";
import { DEFAULT_SECTIONS, runResearch, type RunResearchResult } from "../src/index.js";

const DEMO_REPLIES = fileURLToPath(new URL("../demo/replies.json", import.meta.url));
const CHILD = fileURLToPath(new URL("./children/run-demo.mjs", import.meta.url));
const LABEL = "[canned demo output]";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "openprogram-research-demo-")));
  cleanups.push(() => removeTree(dir));
  return dir;
}

function store(): TempStore {
  const created = createTempStore();
  cleanups.push(() => created.cleanup());
  return created;
}

describe("the scripted demo (demo/replies.json)", () => {
  it("labels every reply as canned output and runs a full pipeline, using every reply once", async () => {
    const entries = JSON.parse(readFileSync(DEMO_REPLIES, "utf8")) as Array<{ reply: string }>;
    // A stage that asks for a schema gets JSON: the label is inside it.
    expect(entries.every((entry) => entry.reply.startsWith(LABEL) || entry.reply.startsWith("{"))).toBe(true);
    expect(entries.every((entry) => entry.reply.includes(LABEL))).toBe(true);

    const runtime = createRuntime({ provider: "scripted", script: DEMO_REPLIES });
    if (!runtime || !(runtime.provider instanceof ScriptedProvider)) throw new Error("expected a scripted runtime");
    const workDir = join(tempDir(), "work");
    const run = await runResearch("any task at all", { db: store().db, runtime, workDir });

    expect(run.status).toBe("completed");
    expect(runtime.provider.remaining).toBe(0);
    expect(runtime.provider.requests).toHaveLength(entries.length);
    expect(run.result).toMatchObject({
      revised: true,
      sections: [...DEFAULT_SECTIONS],
      review: { decision: "revise" },
    });
    const paper = readFileSync(join(workDir, "paper", "paper.md"), "utf8");
    for (const section of ["Abstract", "Introduction", "Related Work", "Method", "Experiments", "Conclusion"]) {
      expect(paper).toContain(`## ${section}\n\n${LABEL}`);
    }
    for (const artifact of [
      "literature review/review.md",
      "ideas/ideas.md",
      "ideas/chosen.md",
      "experiments/plan.md",
      "review/review.md",
    ]) {
      expect(readFileSync(join(workDir, artifact), "utf8")).toContain(LABEL);
    }
  });

  it("runs end to end from the built package in a fresh process configured only by the environment", async () => {
    const home = tempDir();
    const cwd = tempDir();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      OPENPROGRAM_HOME: home,
      OPENPROGRAM_PROVIDER: "scripted",
      OPENPROGRAM_SCRIPT: DEMO_REPLIES,
    };
    const child = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const process_ = spawn(process.execPath, [CHILD, "survey agent reliability"], {
        cwd,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      process_.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      process_.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      process_.on("error", reject);
      process_.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(child.stderr).not.toMatch(/Error/);
    expect(child.code).toBe(0);
    const run = JSON.parse(child.stdout) as RunResearchResult;
    expect(run.status).toBe("completed");
    expect(run.sessionId).toMatch(/^research_[0-9a-f]{10}$/);
    // The default work dir: ./research/<sessionId> under the process's cwd; the session under $OPENPROGRAM_HOME.
    expect(run.workDir).toBe(join(cwd, "research", run.sessionId));
    for (const path of run.artifacts) expect(existsSync(path), path).toBe(true);
    expect(existsSync(join(home, "sessions", run.sessionId, "meta.json"))).toBe(true);
    expect(readFileSync(join(run.workDir, "paper", "paper.md"), "utf8")).toContain(LABEL);
  });
});

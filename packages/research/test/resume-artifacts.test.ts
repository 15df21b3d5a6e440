// Resuming a research run (issue 14): the artifact writes are recorded calls,
// so a resumed run leaves the files written before the stop as they are and
// ends with the work dir an uninterrupted run leaves, versions included, even
// when the stop landed inside a write.
import {
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import type { SessionNode } from "@openprogram/session-context";
import { resumeTurn } from "@openprogram/session-context/turns";
import { afterEach, describe, expect, it } from "vitest";
import { PAPER_FILE, researchAgent, runResearch, type ResearchResult } from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { researchModel } from "./helpers/research-model.js";
import { calls, nodesOf } from "./helpers/session.js";

const TASK = "Survey how LLM agents stay reliable.";

let fixture: ResearchFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** Every file under `dir` (versions included) with its bytes and modification time. */
function readTree(dir: string): Map<string, { text: string; mtimeMs: number }> {
  const files = new Map<string, { text: string; mtimeMs: number }>();
  const walk = (current: string): void => {
    for (const name of readdirSync(current).sort()) {
      const path = join(current, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else files.set(relative(dir, path), { text: readFileSync(path, "utf8"), mtimeMs: stat.mtimeMs });
    }
  };
  walk(dir);
  return files;
}

const texts = (tree: Map<string, { text: string }>): Record<string, string> =>
  Object.fromEntries([...tree].map(([name, file]) => [name, file.text]));

/**
 * What a kill -9 inside the final paper write leaves, for each point of that
 * write: nothing yet; the old paper linked as its version, not replaced yet;
 * the version made and the revised paper in place, its node not finished.
 */
const STOPS = {
  "before the write": (): void => undefined,
  "after keeping the draft aside": (workDir: string): void =>
    linkSync(join(workDir, "paper", "paper.md"), join(workDir, "paper", "paper.v1.md")),
  "after replacing the file": (workDir: string, revised: string): void => {
    linkSync(join(workDir, "paper", "paper.md"), join(workDir, "paper", "paper.v1.md"));
    // A new file renamed into place, as the writer does: the version keeps the draft.
    writeFileSync(join(workDir, "paper", ".paper.md.tmp"), revised);
    renameSync(join(workDir, "paper", ".paper.md.tmp"), join(workDir, "paper", "paper.md"));
  },
} as const;

describe("resuming a research run stopped after the revision", () => {
  it.each(Object.keys(STOPS) as Array<keyof typeof STOPS>)(
    "ends with the uninterrupted run's result and files, rewriting none of them (stopped %s)",
    async (stop) => {
      fixture = await startResearchFixture(researchModel({ decision: "revise" }));
      const { db } = fixture.store;
      const runtime = fixture.runtime;

      const reference = await runResearch(TASK, { db, runtime, workDir: fixture.workDir("reference") });
      const referenceTree = readTree(reference.workDir);
      const referenceRequests = fixture.server.requests.length;

      // The same run, stopped when it starts writing the revised paper (its last step).
      const workDir = fixture.workDir("resumed");
      const stopper = new AbortController();
      let paperWrites = 0;
      const onEvent = (event: { type: string; node?: SessionNode }): void => {
        const node = event.node;
        if (event.type !== "node" || node?.name !== "write_artifact" || node.metadata.status !== "running") return;
        if ((node.input as { artifact: string }).artifact === PAPER_FILE && ++paperWrites === 2) stopper.abort();
      };
      const stopped = await runResearch(TASK, { db, runtime, workDir, signal: stopper.signal, onEvent }).then(
        () => null,
        (error: unknown) => error as Error & { sessionId: string },
      );
      expect(stopped?.name).toBe("CancelledError");
      STOPS[stop](workDir, referenceTree.get("paper/paper.md")?.text as string);
      const before = readTree(workDir);
      const requestsBefore = fixture.server.requests.length;

      const sessionId = stopped?.sessionId as string;
      const resumed = await resumeTurn<ResearchResult>({ sessionId, db, runtime, program: researchAgent });

      // Every model call had finished: the resume sends none, and returns what the uninterrupted run returned.
      expect(requestsBefore - referenceRequests).toBe(referenceRequests);
      expect(fixture.server.requests.length).toBe(requestsBefore);
      expect(resumed).toEqual(reference.result);
      expect(texts(readTree(workDir))).toEqual(texts(referenceTree));
      // The files written before the stop were not written again (only the paper, whose write was stopped).
      const after = readTree(workDir);
      for (const [name, file] of before) {
        if (name === "paper/paper.md") continue;
        expect(after.get(name)?.mtimeMs, name).toBe(file.mtimeMs);
      }
      // The finished writes were replayed, not recorded again: one more paper write, the stopped one.
      const writes = calls(await nodesOf(db, sessionId), "write_artifact");
      expect(writes.filter((node) => node.metadata.status === "completed")).toHaveLength(
        reference.result.artifacts.length + 7,
      );
    },
  );
});

describe("resuming a research run whose artifact write failed", () => {
  it("writes the file again (the failure was the disk's, not the run's) and sends no model request twice", async () => {
    fixture = await startResearchFixture(researchModel({ decision: "accept" }));
    const { db } = fixture.store;
    const runtime = fixture.runtime;
    const reference = await runResearch(TASK, { db, runtime, workDir: fixture.workDir("reference") });
    const referenceRequests = fixture.server.requests.length;

    // A file where the review's folder belongs: the last write fails with ENOTDIR.
    const workDir = fixture.workDir("resumed");
    mkdirSync(workDir);
    writeFileSync(join(workDir, "review"), "in the way\n");
    const failed = await runResearch(TASK, { db, runtime, workDir }).then(
      () => null,
      (error: unknown) => error as Error & { code: string; sessionId: string },
    );
    expect(failed?.code).toBe("artifact_write_failed");
    unlinkSync(join(workDir, "review"));

    const resumed = await resumeTurn<ResearchResult>({
      sessionId: failed?.sessionId as string,
      db,
      runtime,
      program: researchAgent,
    });
    expect(resumed).toEqual(reference.result);
    expect(texts(readTree(workDir))).toEqual(texts(readTree(reference.workDir)));
    expect(fixture.server.requests.length).toBe(2 * referenceRequests);
  });
});

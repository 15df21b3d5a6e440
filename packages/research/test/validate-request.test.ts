import { chmodSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError, RuntimeMissingError } from "@openprogram/session-context";
import { runResearch, validateResearchRequest } from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { researchModel } from "./helpers/research-model.js";

let fixture: ResearchFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const RUNNING_AS_ROOT = process.getuid?.() === 0;

/** Runs a bad request and checks it failed with `type` before any request, session or file. */
async function expectRejectedBeforeAnything(
  task: string,
  options: { workDir?: string; sections?: string[]; runtime?: null },
  message: RegExp,
  type: new (...args: never[]) => Error = InvalidInputError,
): Promise<void> {
  const active = fixture as ResearchFixture;
  const before = readdirSync(active.dir).sort();
  const error = await runResearch(task, { db: active.store.db, runtime: active.runtime, ...options }).catch(
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(type);
  expect((error as Error).message).toMatch(message);
  expect(active.server.requests).toHaveLength(0);
  expect(await active.store.db.listSessions()).toHaveLength(0);
  expect(readdirSync(active.dir).sort()).toEqual(before);
}

describe("bad input fails before any model call, session or file", () => {
  it("an empty or blank task", async () => {
    fixture = await startResearchFixture(researchModel());
    await expectRejectedBeforeAnything("", { workDir: fixture.workDir() }, /task must be a non-empty string/);
    await expectRejectedBeforeAnything("  \n ", { workDir: fixture.workDir() }, /task must be a non-empty string/);
    expect(() => validateResearchRequest(42, {})).toThrow(/non-empty string, not number/);
  });

  it("a work dir that is a file, or lies under a file", async () => {
    fixture = await startResearchFixture(researchModel());
    const file = join(fixture.dir, "notes.txt");
    writeFileSync(file, "not a directory");
    await expectRejectedBeforeAnything(
      "a task",
      { workDir: file },
      /The work dir .*notes\.txt is a file, not a directory/,
    );
    await expectRejectedBeforeAnything(
      "a task",
      { workDir: join(file, "deeper", "work") },
      /cannot be created: .*notes\.txt is a file/,
    );
  });

  it("a work dir that cannot be written, even by root (a real probe, not permission bits)", async () => {
    fixture = await startResearchFixture(researchModel());
    // /proc refuses new files for every user, root included.
    await expectRejectedBeforeAnything(
      "a task",
      { workDir: "/proc/openprogram-research-test" },
      /is not writable \(it would be created in \/proc/,
    );

    const locked = join(fixture.dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    try {
      if (RUNNING_AS_ROOT) {
        // Root writes through permission bits, so the directory is writable and the probe says so.
        expect(() => validateResearchRequest("a task", { workDir: join(locked, "work") })).not.toThrow();
        writeFileSync(join(locked, "written-by-root"), "yes");
      } else {
        expect(() => validateResearchRequest("a task", { workDir: join(locked, "work") })).toThrow(
          /not writable .*EACCES/,
        );
      }
    } finally {
      chmodSync(locked, 0o700);
    }
  });

  it("an unknown, repeated or empty list of sections, naming the valid ones", async () => {
    fixture = await startResearchFixture(researchModel());
    const workDir = fixture.workDir();
    await expectRejectedBeforeAnything(
      "a task",
      { workDir, sections: ["method", "discussion"] },
      /Unknown section "discussion"\. Valid sections: abstract, introduction, related work, method, experiments, conclusion\./,
    );
    await expectRejectedBeforeAnything(
      "a task",
      { workDir, sections: ["Method", "method"] },
      /"method" is listed twice/,
    );
    await expectRejectedBeforeAnything("a task", { workDir, sections: [] }, /sections is empty/);
    expect(() => validateResearchRequest("a task", { sections: ["related_work", "Related-Work"] })).toThrow(
      /listed twice/,
    );
  });

  it("no model configured: says what to set", async () => {
    fixture = await startResearchFixture(researchModel());
    await expectRejectedBeforeAnything(
      "a task",
      { workDir: fixture.workDir(), runtime: null },
      /OPENPROGRAM_PROVIDER/,
      RuntimeMissingError,
    );
  });

  it("accepts a valid request without creating anything", () => {
    expect(() =>
      validateResearchRequest("a task", { sections: ["Related Work", "abstract"], interactive: true }),
    ).not.toThrow();
  });
});

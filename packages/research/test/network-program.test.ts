import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { InvalidInputError, sessionContext } from "@openprogram/session-context";
import { afterEach, describe, expect, it } from "vitest";
import { researchProgram } from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { researchModel } from "./helpers/research-model.js";

let fixture: ResearchFixture | undefined;
afterEach(async () => fixture?.close());

describe("researchProgram: the research harness offered to the network", () => {
  it("writes each session's artifacts under <workDirRoot>/<session id>, chosen by the server", async () => {
    fixture = await startResearchFixture(researchModel());
    const program = researchProgram({ workDirRoot: fixture.workDir("served") });
    const { db } = fixture.store;
    const sessionId = await sessionContext({ db, runtime: fixture.runtime, source: "web" }, async (session) => {
      const result = await program.run({ task: "Survey reliable agents." });
      expect(result.status).toBe("completed");
      return session.sessionId;
    });
    expect(readdirSync(join(fixture.workDir("served"), sessionId))).toContain("paper");
    expect(program.description).toMatch(/^Runs a research project/);
  });

  it.each([
    [{ task: "x", workDir: "/etc" }, /does not accept "workDir"/],
    [{ task: "x", interactive: "yes" }, /"interactive" must be true or false/],
    [{ task: "x", sections: "method" }, /"sections" must be an array/],
    ["just a string", /takes \{"task"/],
  ])("refuses %j before any request or file", async (input, message) => {
    fixture = await startResearchFixture(researchModel());
    const program = researchProgram({ workDirRoot: fixture.workDir("served") });
    const error = await sessionContext({ db: fixture.store.db, runtime: fixture.runtime, source: "web" }, () =>
      program.run(input),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(message);
    expect(fixture.server.requests).toHaveLength(0);
    expect(existsSync(fixture.workDir("served"))).toBe(false);
  });
});

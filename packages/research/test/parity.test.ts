import { afterEach, describe, expect, it } from "vitest";
import { sessionContext } from "@openprogram/session-context";
import { createScriptedAsker } from "@openprogram/session-context/testing";
import { researchAgent, runResearch } from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { researchModel, stageOf } from "./helpers/research-model.js";

const fixtures: ResearchFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
});

async function fixture(): Promise<ResearchFixture> {
  const started = await startResearchFixture(researchModel());
  fixtures.push(started);
  return started;
}

/** The bodies sent for a first run and a continuation in the same session, with the same task and answers. */
async function twoRuns(
  entry: "runResearch" | "researchAgent",
): Promise<{ bodies: string[]; fixture: ResearchFixture; sessionId: string }> {
  const active = await fixture();
  const { db } = active.store;
  const workDir = active.workDir(`${entry}-work`);
  const run = async (task: string, sessionId?: string): Promise<string> => {
    const asker = createScriptedAsker(["2"]);
    if (entry === "runResearch") {
      return (
        await runResearch(task, {
          db,
          runtime: active.runtime,
          workDir,
          interactive: true,
          asker,
          ...(sessionId ? { sessionId } : {}),
        })
      ).sessionId;
    }
    // As the dispatcher runs a program: its own context, source "web", researchAgent at the top level.
    return sessionContext(
      { db, runtime: active.runtime, asker, source: "web", idPrefix: "web", ...(sessionId ? { sessionId } : {}) },
      async (session) => {
        await researchAgent({ task, workDir, interactive: true });
        return session.sessionId;
      },
    );
  };
  const sessionId = await run("survey agent reliability");
  await run("now turn it into a paper", sessionId);
  return { bodies: active.server.requests.map((request) => request.body), fixture: active, sessionId };
}

describe("the same task and answers send byte-identical request bodies", () => {
  it("from two runResearch runs with different work dirs and stores, including a continuation", async () => {
    const a = await twoRuns("runResearch");
    const b = await twoRuns("runResearch");
    expect(a.fixture.store.root).not.toBe(b.fixture.store.root);
    expect(a.sessionId).not.toBe(b.sessionId);
    expect(a.bodies.length).toBe(22);
    expect(a.fixture.server.requests.map(stageOf)).toEqual(b.fixture.server.requests.map(stageOf));
    expect(b.bodies).toEqual(a.bodies);
  });

  it("from runResearch and from researchAgent inside another entry's context", async () => {
    const code = await twoRuns("runResearch");
    const web = await twoRuns("researchAgent");
    expect(web.sessionId.startsWith("web_")).toBe(true);
    expect(web.bodies).toEqual(code.bodies);
  });
});

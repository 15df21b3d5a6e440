import { InvalidInputError, sessionContext } from "@openprogram/session-context";
import { describe, expect, it } from "vitest";
import { isolatedProgram } from "../src/index.js";
import { programPath, scriptedEnv, useTempStore } from "./helpers.js";

describe("isolatedProgram: a { run(input) } program entry that runs each call in a child", () => {
  const store = useTempStore();

  it("runs in the caller's session context and keeps the description", async () => {
    const program = isolatedProgram({
      module: programPath("outline.ts"),
      export: "outline",
      env: scriptedEnv(store, ["S.", "O."]),
      description: "Outline a topic.",
    });
    expect(program.description).toBe("Outline a topic.");
    const { sessionId, output } = await sessionContext(
      { db: store.db, runtime: null, source: "test" },
      async (session) => ({
        sessionId: session.sessionId,
        output: await program.run({ topic: "speculative decoding" }),
      }),
    );
    expect(output).toEqual({ summary: "S.", text: "O." });
    expect((await store.db.loadNodes(sessionId)).map((node) => node.name)).toEqual([
      "outline",
      "summarise",
      "scripted",
      "scripted",
    ]);
  });

  it("rejects input a child cannot receive", async () => {
    const program = isolatedProgram({ module: programPath("outline.ts"), export: "outline" });
    expect("description" in program).toBe(false);
    await sessionContext({ db: store.db, runtime: null, source: "test" }, async () => {
      await expect(program.run("speculative decoding")).rejects.toBeInstanceOf(InvalidInputError);
    });
  });
});

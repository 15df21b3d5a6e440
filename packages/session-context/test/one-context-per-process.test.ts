import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import * as core from "../src/index.js";
import { createTempStore, removeTree, scriptedRuntime } from "../src/testing/index.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
// Copies live inside the package so they resolve its dependencies, exactly as a user's own install would.
const copiesDir = mkdtempSync(join(packageDir, ".copy-test-"));
afterAll(() => removeTree(copiesDir));

function copyCore(name: string, patch?: (contextTypes: string) => string): string {
  const target = join(copiesDir, name);
  cpSync(join(packageDir, "src"), target, { recursive: true });
  if (patch) {
    const typesPath = join(target, "context", "types.ts");
    writeFileSync(typesPath, patch(readFileSync(typesPath, "utf8")));
  }
  return join(target, "index.ts");
}

describe("one context per process, however many copies of the core are loaded", () => {
  it("a program importing its own copy sees the context the entry installed", async () => {
    const copy = (await import(copyCore("user-copy"))) as typeof core;
    expect(copy.agenticFunction).not.toBe(core.agenticFunction);
    const store = createTempStore();
    try {
      const { runtime, provider } = scriptedRuntime(["from the copy"]);
      // The "user program" is written against its own copy of the package.
      const userProgram = copy.agenticFunction(
        { name: "user_program", doc: "Doc from the user's copy." },
        async (_: object, { runtime: rt }) => {
          const inner = copy.currentSession().sessionId;
          return { text: await rt.exec("go"), inner, call: copy.currentCallId() };
        },
      );
      expect(core.isAgenticFunction(userProgram)).toBe(true);
      const result = await core.sessionContext({ db: store.db, runtime }, async (session) => ({
        session: session.sessionId,
        out: await userProgram({}),
      }));
      expect(result.out.inner).toBe(result.session);
      expect(result.out.text).toBe("from the copy");
      expect(provider.requests[0]?.request.messages[0]).toEqual({
        role: "system",
        content: "Doc from the user's copy.",
      });
      const nodes = await store.db.loadNodes(result.session);
      expect(nodes.map((node) => node.name)).toEqual(["user_program", "scripted"]);
      expect(nodes[1]?.caller).toBe(result.out.call);
      // Outside, the copy sees no context either.
      expect(copy.hasSessionContext()).toBe(false);
    } finally {
      store.cleanup();
    }
  });

  it("a copy with an incompatible context protocol fails loudly when loaded", async () => {
    const path = copyCore("incompatible", (source) =>
      source.replace("export const CONTEXT_PROTOCOL = 1;", "export const CONTEXT_PROTOCOL = 2;"),
    );
    const error: unknown = await import(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as { code?: string }).code).toBe("context_version_mismatch");
    expect((error as Error).message).toMatch(/Two incompatible copies/);
  });
});

import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const fixture = (name: string): string =>
  fileURLToPath(new URL(`../../../tools/lint-fixtures/${name}`, import.meta.url));

describe("the lint boundary", () => {
  it("fires on every way an adapter could bypass the core", async () => {
    const eslint = new ESLint({ cwd: repoRoot, ignore: false });
    const [result] = await eslint.lintFiles([fixture("bad-adapter.ts")]);
    const boundary = (result?.messages ?? []).filter((message) =>
      ["@typescript-eslint/no-restricted-imports", "no-restricted-syntax"].includes(message.ruleId ?? ""),
    );
    expect(boundary.map((message) => message.line).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 8, 9]);
    for (const message of boundary) expect(message.message).toContain("sessionContext()");
  });

  it("passes an adapter that goes through the public API", async () => {
    const eslint = new ESLint({ cwd: repoRoot, ignore: false });
    const [result] = await eslint.lintFiles([fixture("good-adapter.ts")]);
    expect(result?.messages.filter((message) => message.ruleId?.includes("restricted"))).toEqual([]);
  });

  // Type-aware ESLint over every package's sources: 13-23 s with no other test of ours running
  // (CPU, not disk), growing with the tree; 125 s once with the machine loaded 25x by other work.
  // The timeout bounds a hang: 300 s. `npm test` sets OPENPROGRAM_TREE_LINTED once its checks phase has
  // linted every package (the same config, a superset of these files) without an error: the same proof, given.
  it.skipIf(process.env.OPENPROGRAM_TREE_LINTED === "1")(
    "passes the whole source tree",
    { timeout: 300_000 },
    async () => {
      const eslint = new ESLint({ cwd: repoRoot });
      const results = await eslint.lintFiles(["packages/*/src/**/*.ts"]);
      const errors = results.flatMap((result) =>
        result.messages
          .filter((message) => message.severity === 2)
          .map((message) => `${result.filePath}:${message.line} ${message.ruleId}: ${message.message}`),
      );
      expect(errors).toEqual([]);
    },
  );
});

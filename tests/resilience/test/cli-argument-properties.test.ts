// Bad input, systematically (issue 8 section 4), over command-line arguments:
// whatever the arguments, the CLI exits 0, 1 or 2 (never a crash or a hang),
// prints a coded error rather than a stack trace, and writes nothing outside
// OPENPROGRAM_HOME.
import { mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, stopCliProcesses } from "@openprogram/cli/testing";
import { removeTree } from "@openprogram/session-context/testing";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";

const work = mkdtempSync(join(tmpdir(), "openprogram-argv-"));
const home = join(work, "home");
const cwd = join(work, "cwd");
mkdirSync(home);
mkdirSync(cwd);
afterAll(async () => {
  await stopCliProcesses();
  removeTree(work);
});
// No provider, no terminal, stdin closed: nothing may wait for a person.
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, OPENPROGRAM_HOME: home };

const word = fc.oneof(
  fc.constantFrom(
    "run",
    "chat",
    "research",
    "sessions",
    "list",
    "show",
    "tree",
    "log",
    "rm",
    "export",
    "doctor",
    "--json",
    "--session",
    "--resume",
    "--input",
    "--input-file",
    "--answers",
    "--format",
    "--work-dir",
    "--yes",
    "--all",
    "--limit",
    "--isolate",
    "--interactive",
    "--fix",
    "-h",
    "--version",
    "md",
    "json",
  ),
  fc.constantFrom(
    "../../etc/passwd",
    "/etc/passwd#x",
    "./missing.mjs#fn",
    "{",
    "{}",
    '{"a":1}',
    "[1,2]",
    "-1",
    "0",
    "x".repeat(300),
    "a/b",
    "..",
    "\u00e9\u0301",
    "--",
    "-",
  ),
  fc.string({ unit: "grapheme", maxLength: 12 }).filter((text) => !text.includes("\0")),
);

describe("random command lines", () => {
  it("exit 0, 1 or 2 with a coded error and no stack trace, and write nothing outside OPENPROGRAM_HOME", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(word, { minLength: 1, maxLength: 5 }).filter((args) => !args.includes("serve")),
        async (args) => {
          const { code, signal, stderr } = await runCli(args, { env, cwd, timeoutMs: 20_000 });
          expect(signal, `openprogram ${JSON.stringify(args)} was killed (a hang?)`).toBeNull();
          expect([0, 1, 2], `exit code of openprogram ${JSON.stringify(args)}: ${stderr}`).toContain(code);
          if (code !== 0 && !args.includes("--json"))
            expect(stderr.trim(), `openprogram ${JSON.stringify(args)}`).not.toBe("");
          expect(stderr, `a stack trace from openprogram ${JSON.stringify(args)}`).not.toMatch(
            /\n\s+at .+:\d+:\d+\)?\n/,
          );
          expect(readdirSync(cwd), `files written beside the store by openprogram ${JSON.stringify(args)}`).toEqual([]);
        },
      ),
      { numRuns: 80 },
    );
  });
});

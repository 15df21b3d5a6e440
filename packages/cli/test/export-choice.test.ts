// `openprogram run` and `openprogram run --isolate` pick the same export of a
// module by the core's one rule (resolveAgenticExport), and refuse the same
// modules with the same error: the child process never runs a different
// function than the same command without --isolate.
import { describe, expect, it } from "vitest";
import { program, runCli, type CliResult, useCliHome } from "./helpers/cli.js";

const home = useCliHome();

/** What a run showed the user: its exit code, its result and its error line. */
interface Shown {
  code: number | null;
  stdout: string;
  error: string | null;
}

function shown(result: CliResult): Shown {
  return { code: result.code, stdout: result.stdout, error: /^error \[.*$/m.exec(result.stderr)?.[0] ?? null };
}

/** Runs `module` in-process and with --isolate, side by side; the working directory is outside the tree, so both name the module by its absolute path. */
async function bothWays(module: string): Promise<{ inProcess: Shown; isolated: Shown }> {
  const options = { env: home.env(), cwd: home.home };
  const [inProcess, isolated] = await Promise.all([
    runCli(["run", module], options),
    runCli(["run", module, "--isolate"], options),
  ]);
  return { inProcess: shown(inProcess), isolated: shown(isolated) };
}

describe("run and run --isolate choose the same export", () => {
  const picks: Array<{ name: string; module: string; ran: string }> = [
    {
      name: "the named export, when #export is given",
      module: `${program("choose-default.mjs")}#other`,
      ran: "picked_other",
    },
    {
      name: "else the default export, when it is agentic",
      module: program("choose-default.mjs"),
      ran: "picked_default",
    },
    { name: "else the only agentic export", module: program("choose-only.mjs"), ran: "picked_only" },
  ];
  for (const { name, module, ran } of picks) {
    it(name, async () => {
      const { inProcess, isolated } = await bothWays(module);
      expect(inProcess).toEqual({ code: 0, stdout: `${ran}\n`, error: null });
      expect(isolated).toEqual(inProcess);
    });
  }

  const refusals: Array<{ name: string; module: string; error: RegExp }> = [
    {
      name: "several agentic exports and no agentic default",
      module: program("two-programs.mjs"),
      error:
        /^error \[invalid_input\]: \S+two-programs\.mjs exports 2 agentic functions \(first, second\) and no agentic default export; pick one, e\.g\. \S+two-programs\.mjs#first\.$/,
    },
    {
      name: "no agentic export at all",
      module: program("plain-function.mjs"),
      error: /^error \[not_agentic_function\]: \S+plain-function\.mjs exports no agentic function\. /,
    },
    {
      name: "a named export that is not agentic",
      module: `${program("choose-only.mjs")}#default`,
      error:
        /^error \[not_agentic_function\]: Export 'default' of \S+choose-only\.mjs is not an agentic function \(it is an object\)\. .* Its agentic exports: onlyOne\.$/,
    },
    {
      name: "a named export that does not exist",
      module: `${program("choose-only.mjs")}#onlyone`,
      error:
        /^error \[invalid_input\]: \S+choose-only\.mjs has no export named 'onlyone'\. Its agentic exports: onlyOne\.$/,
    },
  ];
  for (const { name, module, error } of refusals) {
    it(`refuses alike: ${name}`, async () => {
      const { inProcess, isolated } = await bothWays(module);
      expect(inProcess.code).toBe(2);
      expect(inProcess.stdout).toBe("");
      expect(inProcess.error).toMatch(error);
      expect(isolated).toEqual(inProcess);
    });
  }
});

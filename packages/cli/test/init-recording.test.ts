// `openprogram init`'s test (program.test.mts) replays its committed recording (__recordings__/write-opening.jsonl)
// with useRecording: in a freshly initialised project it passes offline (in a network namespace with no network
// at all where the machine allows one), and fails naming the field once the program asks the model something else.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_DIR, runCli, useCliHome } from "./helpers/cli.js";

const home = useCliHome();

/** `unshare -rn`: a user and network namespace, so the run has no network at all (null: not allowed here). */
const OFFLINE_PREFIX = spawnSync("unshare", ["-rn", "true"]).status === 0 ? ["unshare", "-rn"] : null;

/** The packages the project's package.json names, from this checkout (what `npm install` would give it). */
function linkPackages(project: string): void {
  mkdirSync(join(project, "node_modules", "@openprogram"), { recursive: true });
  for (const name of ["@openprogram/session-context", "zod", "vitest"])
    symlinkSync(realpathSync(join(CLI_DIR, "node_modules", name)), join(project, "node_modules", name), "dir");
}

function npmTest(project: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, join(project, "node_modules", "vitest", "vitest.mjs"), "run"];
  const [file, ...args] = [...(OFFLINE_PREFIX ?? []), ...command];
  return new Promise((resolve, reject) => {
    // No provider, no key, nothing inherited: only the recording can answer.
    const child = spawn(file!, args, {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: home.home, OPENPROGRAM_HOME: home.home, NO_COLOR: "1" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("openprogram init's test", () => {
  it("replays the committed recording offline and passes; a changed prompt fails naming the field", async () => {
    const init = await runCli(["init", "tested"], { env: home.env(), cwd: home.home });
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/^ {2}npm test +# program\.test\.mts/m);
    const project = join(home.home, "tested");
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.scripts.test).toBe("vitest run");
    expect(manifest.devDependencies.vitest).toMatch(/^\^4\./);
    expect(readFileSync(join(project, "program.test.mts"), "utf8")).toContain('useRecording("write-opening")');
    linkPackages(project);

    const passed = await npmTest(project);
    expect(passed.output).toMatch(/Tests +1 passed/);
    expect(passed.code).toBe(0);

    // The program's instructions changed: its first model request is no longer the recorded one.
    const program = join(project, "program.mts");
    writeFileSync(program, readFileSync(program, "utf8").replace("You plan short blog posts.", "You plan posts."));
    const failed = await npmTest(project);
    expect(failed.code).toBe(1);
    expect(failed.output).toContain(
      'replay mismatch at call 0, field messages[0].content: recorded "You plan short blog posts.',
    );
  });
});

// Start-up: every process that imports the core (a CLI command, a child process, a program) pays for what the
// import loads. Ajv's CommonJS files cost about 70 ms of it, and most programs never give a plain JSON Schema, so
// it is loaded on the first one (schema/checked-schema.ts). Checked in a fresh process on the built package.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

/** Runs `body` in a fresh Node process from the package's folder and returns what it prints. */
function inFreshProcess(body: string): string {
  return execFileSync(process.execPath, ["--input-type=module", "-e", body], {
    cwd: packageDir,
    encoding: "utf8",
  }).trim();
}

/** Defines ajvLoaded(): whether Ajv is among the CommonJS modules loaded so far. */
const AJV_LOADED = `const { createRequire } = await import("node:module");
const ajvLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes("/ajv/"));`;

describe("what importing the core loads", () => {
  it("does not load Ajv until a plain JSON Schema is given, then validates with it", () => {
    const printed = inFreshProcess(`
      const core = await import("./dist/index.js");
      ${AJV_LOADED}
      const before = ajvLoaded();
      const { z } = await import("zod");
      core.tool({ name: "zod_tool", description: "d", input: z.object({ a: z.string() }), execute: () => 1 });
      const afterZod = ajvLoaded();
      const plain = core.tool({
        name: "plain_tool",
        description: "d",
        input: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
        execute: () => 1,
      });
      const afterPlain = ajvLoaded();
      const good = await plain.input.validate({ n: 3 });
      const bad = await plain.input.validate({ n: "three" });
      console.log(JSON.stringify({ before, afterZod, afterPlain, definition: plain.parameters, good, bad }));
    `);
    expect(JSON.parse(printed)).toEqual({
      before: false,
      afterZod: false,
      afterPlain: true,
      definition: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
      good: { ok: true, value: { n: 3 } },
      bad: { ok: false, problems: ["arguments.n: must be integer"] },
    });
  });
});

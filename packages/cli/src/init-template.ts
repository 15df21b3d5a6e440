// The files `openprogram init` writes: a program that runs offline at once
// (scripted replies named by the project's openprogram.config.json) and shows
// the four things a new user wants to see: an agentic function calling the
// model, one calling another, a question to the human, and a tool the model calls.
import { INIT_RECORDING, INIT_RECORDING_NAME } from "./init-recording.js";
import { cliVersion } from "./version.js";

/** The program's file name: .mts is ESM whatever the package.json around it says (the one npm install writes has no "type"). */
export const PROGRAM_FILE = "program.mts";

const PROGRAM = `import { agenticFunction, askUser, tool } from "@openprogram/session-context";
import { z } from "zod";

/** A tool the model may call while it writes: it counts a draft's words, so the opening stays short. */
const countWords = tool({
  name: "count_words",
  description: "Count the words of a draft paragraph.",
  input: z.object({ text: z.string() }),
  execute: ({ text }) => text.split(/\\s+/).filter(Boolean).length,
});

/** Asks who the post is for, then has the model pick one angle for that reader. */
export const pickAngle = agenticFunction(
  {
    name: "pick_angle",
    doc: "You plan short blog posts. Given a topic and a reader, propose one specific angle in one sentence.",
    input: z.object({ topic: z.string() }),
  },
  async ({ topic }, { runtime }) => {
    const reader = await askUser(\`Who is the post about \${topic} for?\`, { choices: ["beginners", "experts"] });
    return runtime.exec(\`Topic: \${topic}\\nReader: \${reader}\`);
  },
);

/** The whole program: an angle first (a nested agentic call), then the opening paragraph. */
export default agenticFunction(
  {
    name: "write_opening",
    doc: "You write the opening paragraph of a blog post from its angle: three sentences, plain words, under 60 words (count_words checks a draft).",
    // Checked before anything runs; \`openprogram run program.mts --help\` lists it, and the web page makes a form of it.
    input: z.object({ topic: z.string().default("tide pools").describe("what the post is about") }),
  },
  async ({ topic }, { runtime }) => {
    const angle = await pickAngle({ topic });
    // The model may call count_words (each call is recorded under its reply) before it answers.
    return { angle, opening: await runtime.exec(\`Angle: \${angle}\`, { tools: [countWords] }) };
  },
);
`;

/** The project's one test: the whole program, its model replies answered from a committed recording, offline. */
export const TEST_FILE = "program.test.mts";

/** The test and its recording: files init keeps when they are there already (as it keeps a package.json). */
export const TEST_FILES: readonly string[] = [TEST_FILE, `__recordings__/${INIT_RECORDING_NAME}.jsonl`];

const TEST = `// Runs the whole program with the model's replies answered from __recordings__/${INIT_RECORDING_NAME}.jsonl:
// offline, no key, the same every time. If the program starts asking the model something else, the test fails
// naming the first field that differs (replay_mismatch). Record it anew against the configured model, then
// commit the file: OPENPROGRAM_RECORD=1 npx vitest run
import { sessionContext } from "@openprogram/session-context";
import { createScriptedAsker, createTempStore, useRecording } from "@openprogram/session-context/testing";
import { expect, test } from "vitest";
import writeOpening from "./program.mts";

test("write_opening picks an angle for beginners, then writes a short opening", async () => {
  const { runtime } = useRecording("${INIT_RECORDING_NAME}");
  const store = createTempStore(); // sessions go to a temporary folder, removed after
  try {
    const asker = createScriptedAsker(["beginners"]); // the answer to askUser's question
    const result = await sessionContext({ runtime, db: store.db, asker }, () => writeOpening({ topic: "tide pools" }));
    expect(result.angle).toContain("Tide pools");
    expect(result.opening.split(/\\s+/).length).toBeLessThan(60);
  } finally {
    store.cleanup();
  }
});
`;

const OPENING =
  "Twice a day the sea leaves, and a small city is left behind in the rocks. Crabs, anemones and snails keep it running until the water comes back. Here is how to visit without breaking anything.";

/** The scripted model: the angle, then a call of count_words on the draft, then the opening itself. */
const REPLIES = [
  "Tide pools are tiny cities that rebuild themselves twice a day.",
  { toolCalls: [{ name: "count_words", arguments: { text: OPENING } }] },
  OPENING,
];

/** The zod the program's schema is written with (the range @openprogram/research depends on). */
const ZOD_RANGE = "^4.6.7";
/** The test runner of program.test.mts (the one this project's own tests use). */
const VITEST_RANGE = "^4.1.12";

/** Every file, by name relative to the project directory; `specs` says how to install each @openprogram package. */
export function initFiles(projectName: string, specs: Record<string, string>): Record<string, string> {
  const { "@openprogram/session-context": core, ...tools } = specs;
  const manifest = {
    name: projectName,
    private: true,
    type: "module",
    scripts: { start: `openprogram run ${PROGRAM_FILE}`, test: "vitest run" },
    // The CLI lends its own copies when these are not installed; installing them gives editors the types.
    dependencies: { "@openprogram/session-context": core ?? `^${cliVersion()}`, zod: ZOD_RANGE },
    // The CLI needs the other four: none is on the registry yet, so each comes from where this CLI's came from.
    devDependencies: { ...tools, vitest: VITEST_RANGE },
    // npm 11 asks before running a dependency's install script: esbuild's (under tsx, which loads program.mts)
    // only checks its platform binary. Allowed here, so that `npm install` runs it and says nothing.
    allowScripts: { esbuild: true },
  };
  return {
    [PROGRAM_FILE]: PROGRAM,
    "replies.json": `${JSON.stringify(REPLIES, null, 2)}\n`,
    "openprogram.config.json": `${JSON.stringify({ provider: "scripted", script: "replies.json" }, null, 2)}\n`,
    [TEST_FILE]: TEST,
    [`__recordings__/${INIT_RECORDING_NAME}.jsonl`]: INIT_RECORDING,
    "package.json": `${JSON.stringify(manifest, null, 2)}\n`,
  };
}

/** What `nextSteps` says. */
export interface NextStepsOptions {
  /** The project folder, relative to where the user is ("." when it is here). */
  relativeDir: string;
  /** init wrote package.json (false: it kept one, whose packages are presumably installed). */
  wroteManifest: boolean;
  /** Where the packages come from: "unknown" adds how to get them. */
  source: "tarballs" | "registry" | "unknown";
}

/**
 * What to type next, printed after the files are written. `npx openprogram`: a local install puts the binary in
 * node_modules/.bin, not on PATH.
 */
export function nextSteps({ relativeDir, wroteManifest, source }: NextStepsOptions): string[] {
  const lines = ["Next:"];
  if (relativeDir !== ".") lines.push(`  cd ${relativeDir}`);
  if (wroteManifest)
    lines.push(
      "  npm install                         # the packages package.json names",
      `  npm start                           # runs ${PROGRAM_FILE} offline on replies.json; it asks you one question`,
      `  npm test                            # ${TEST_FILE}: the program replayed from __recordings__/, offline`,
    );
  else lines.push(`  npx openprogram run ${PROGRAM_FILE}     # runs offline on replies.json; it asks you one question`);
  lines.push(
    "  npx openprogram sessions list       # the session it recorded; then npx openprogram sessions tree <id>",
    "  npx openprogram serve               # the same session in the browser",
    'To use a real model, set "provider" in openprogram.config.json (openai, anthropic, ollama, ...) or OPENAI_API_KEY.',
  );
  if (wroteManifest && source === "unknown")
    lines.push(
      "The @openprogram packages are not on the npm registry yet: in the OpenProgram checkout, `npm run pack:all -- <dir>`",
      "builds them; then `npm install <dir>/*.tgz` here instead of `npm install`.",
    );
  return lines;
}

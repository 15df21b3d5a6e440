// The files `openprogram init` writes: a program that runs offline at once
// (scripted replies named by the project's openprogram.config.json) and shows
// the three things a new user wants to see: an agentic function calling the
// model, one calling another, and a question to the human.
import { cliVersion } from "./version.js";

/** The program's file name: .mts is ESM whatever the package.json around it says (the one npm install writes has no "type"). */
export const PROGRAM_FILE = "program.mts";

const PROGRAM = `import { agenticFunction, askUser } from "@openprogram/session-context";

/** Asks who the post is for, then has the model pick one angle for that reader. */
export const pickAngle = agenticFunction(
  {
    name: "pick_angle",
    doc: "You plan short blog posts. Given a topic and a reader, propose one specific angle in one sentence.",
  },
  async ({ topic }: { topic: string }, { runtime }) => {
    const reader = await askUser(\`Who is the post about \${topic} for?\`, { choices: ["beginners", "experts"] });
    return runtime.exec(\`Topic: \${topic}\\nReader: \${reader}\`);
  },
);

/** The whole program: an angle first (a nested agentic call), then the opening paragraph. */
export default agenticFunction(
  {
    name: "write_opening",
    doc: "You write the opening paragraph of a blog post from its angle: three sentences, plain words.",
  },
  async ({ topic }: { topic: string }, { runtime }) => {
    const angle = await pickAngle({ topic });
    return { angle, opening: await runtime.exec(\`Angle: \${angle}\`) };
  },
);
`;

const REPLIES = [
  "Tide pools are tiny cities that rebuild themselves twice a day.",
  "Twice a day the sea leaves, and a small city is left behind in the rocks. Crabs, anemones and snails keep it running until the water comes back. Here is how to visit without breaking anything.",
];

/** Every file, by name relative to the project directory. */
export function initFiles(projectName: string): Record<string, string> {
  const range = `^${cliVersion()}`;
  const manifest = {
    name: projectName,
    private: true,
    type: "module",
    scripts: { start: `openprogram run ${PROGRAM_FILE}` },
    // The CLI lends its own copy when these are not installed; installing them gives editors the types.
    dependencies: { "@openprogram/session-context": range },
    devDependencies: { "@openprogram/cli": range },
  };
  return {
    [PROGRAM_FILE]: PROGRAM,
    "replies.json": `${JSON.stringify(REPLIES, null, 2)}\n`,
    "openprogram.config.json": `${JSON.stringify({ provider: "scripted", script: "replies.json" }, null, 2)}\n`,
    "package.json": `${JSON.stringify(manifest, null, 2)}\n`,
  };
}

/** What to type next, printed after the files are written. */
export function nextSteps(relativeDir: string): string[] {
  const cd = relativeDir === "." ? [] : [`  cd ${relativeDir}`];
  return [
    "Next:",
    ...cd,
    `  openprogram run ${PROGRAM_FILE} --input '{"topic":"tide pools"}'   # runs offline on replies.json; answers its question here`,
    "  openprogram sessions list                                          # the session it recorded; then sessions tree <id>",
    "  openprogram serve                                                  # the same session in the browser",
    'To use a real model, set "provider" in openprogram.config.json (openai, anthropic, ollama, ...) or OPENAI_API_KEY.',
  ];
}

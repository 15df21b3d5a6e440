// Records the model calls of `openprogram init`'s program against its scripted replies (replies.json) and
// writes them into src/init-recording.ts, the recording init ships for program.test.mts. Run after
// `pnpm build` whenever the template program (src/init-template.ts) changes; then build again.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("..", import.meta.url));
const { initFiles, TEST_FILE } = await import(new URL("../dist/init-template.js", import.meta.url).href);
const { INIT_RECORDING_NAME } = await import(new URL("../dist/init-recording.js", import.meta.url).href);

const project = realpathSync(mkdtempSync(join(tmpdir(), "openprogram-init-recording-")));
try {
  const files = initFiles("init-recording", {});
  delete files[`__recordings__/${INIT_RECORDING_NAME}.jsonl`];
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(project, name)), { recursive: true });
    writeFileSync(join(project, name), content);
  }
  linkPackages(project);
  // OPENPROGRAM_RECORD=1: useRecording records against the configured model, here the project's scripted replies.
  execFileSync(process.execPath, [join(project, "node_modules", "vitest", "vitest.mjs"), "run", TEST_FILE], {
    cwd: project,
    env: { PATH: process.env.PATH, HOME: project, OPENPROGRAM_HOME: join(project, "home"), OPENPROGRAM_RECORD: "1" },
    stdio: "inherit",
  });
  const text = readFileSync(join(project, "__recordings__", `${INIT_RECORDING_NAME}.jsonl`), "utf8");
  const lines = text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  const target = join(CLI, "src", "init-recording.ts");
  const source = readFileSync(target, "utf8").replace(
    /const LINES: unknown\[\] = [\s\S]*?;\n\n/,
    `const LINES: unknown[] = ${JSON.stringify(lines, null, 2)};\n\n`,
  );
  writeFileSync(target, source);
  execFileSync(join(CLI, "..", "..", "node_modules", ".bin", "prettier"), ["--write", target], { stdio: "inherit" });
  process.stdout.write(`${target}: ${lines.length} lines\n`);
} finally {
  rmSync(project, { recursive: true, force: true });
}

/** node_modules of a fresh project: the packages its package.json names, from this checkout. */
export function linkPackages(dir) {
  mkdirSync(join(dir, "node_modules", "@openprogram"), { recursive: true });
  for (const name of ["@openprogram/session-context", "zod", "vitest"])
    symlinkSync(realpathSync(join(CLI, "node_modules", name)), join(dir, "node_modules", name), "dir");
}

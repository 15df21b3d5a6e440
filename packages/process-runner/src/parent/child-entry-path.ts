import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ChildProcessError } from "../errors.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The script the child runs: `dist/child-entry.js` beside the built runner.
 * When the runner itself runs from its TypeScript sources (the workspace's
 * tests), the child still runs the built entry: the child must not depend on
 * a TypeScript loader, and the test setup rebuilds a stale dist first.
 */
export function childEntryPath(): string {
  const beside = join(here, "..", "child-entry.js");
  if (existsSync(beside)) return beside;
  const built = join(here, "..", "..", "dist", "child-entry.js");
  if (existsSync(join(here, "..", "child-entry.ts")) && existsSync(built)) return built;
  throw new ChildProcessError(
    `The process runner's child entry is missing (looked for ${beside} and ${built}). Build the package: pnpm --filter @openprogram/process-runner build.`,
    undefined,
    null,
  );
}

// This project, loaded from the workspace build (`pnpm build`): the bench is
// not part of the pnpm workspace, so it imports the built files by path.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The repository's root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const CORE_DIST = join(REPO_ROOT, "packages", "session-context", "dist");

function load(relative) {
  const path = join(CORE_DIST, relative);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: run \`pnpm build\` at the repository's root first (pnpm bench:peers does).`);
  }
  return import(pathToFileURL(path).href);
}

/** `@openprogram/session-context` and its subpaths (`/store`, `/runtime`, ...) in one object, built. */
export const core = async () =>
  Object.assign(
    {},
    await load("index.js"),
    ...(await Promise.all(["store", "runtime", "turns"].map((entry) => load(join("entries", `${entry}.js`))))),
  );
/** `@openprogram/session-context/testing`, built. */
export const coreTesting = () => load(join("testing", "index.js"));

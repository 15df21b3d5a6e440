// This project, loaded from the workspace build (`pnpm build`): the bench is
// not part of the pnpm workspace, so it imports the built files by path.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The repository's root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const CORE_DIST = join(REPO_ROOT, "packages", "session-context", "dist");

function load(relative, dist = CORE_DIST) {
  const path = join(dist, relative);
  if (!existsSync(path)) {
    throw new Error(
      dist === CORE_DIST
        ? `${path} is missing: run \`pnpm build\` at the repository's root first (pnpm bench:peers does).`
        : `${path} is missing: build the other checkout (\`pnpm install && pnpm build\` at its root) first.`,
    );
  }
  return import(pathToFileURL(path).href);
}

/**
 * `@openprogram/session-context` and its subpaths (`/store`, `/runtime`, ...) in one object, built; from `dist`
 * when given (another checkout's `packages/session-context/dist`, for the openprogram-alt variant).
 */
export const core = async (dist = CORE_DIST) =>
  Object.assign(
    {},
    await load("index.js", dist),
    ...(await Promise.all(["store", "runtime", "turns"].map((entry) => load(join("entries", `${entry}.js`), dist)))),
  );
/** `@openprogram/session-context/testing`, built. */
export const coreTesting = () => load(join("testing", "index.js"));

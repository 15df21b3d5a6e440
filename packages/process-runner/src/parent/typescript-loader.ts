import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidInputError } from "@openprogram/session-context";

const TYPESCRIPT_MODULE = /\.(?:ts|mts|cts|tsx)$/;

/**
 * For a TypeScript module, the file: URL of tsx's ESM API (`tsx/esm/api`),
 * which the child registers after the core has loaded: loading the core
 * itself through tsx's hooks (`node --import tsx`) made the child start 2-4
 * times slower. tsx is looked up from the module's own project first, then
 * from this package, then from the program that started this process (the
 * `openprogram` CLI ships tsx). Null for JavaScript modules.
 */
export function typeScriptLoaderFor(modulePath: string): string | null {
  if (!TYPESCRIPT_MODULE.test(modulePath)) return null;
  const bases = [modulePath, import.meta.filename, process.argv[1]].filter(
    (base): base is string => typeof base === "string" && base !== "",
  );
  for (const base of bases) {
    const api = tsxEsmApi(base);
    if (api) return api;
  }
  throw new InvalidInputError(
    `${modulePath} is TypeScript, and running it in a child process needs tsx (4.x), which is not installed where the module, ` +
      "@openprogram/process-runner or this program could find it. Install it in the module's project (npm install --save-dev tsx) or run a compiled .js module.",
  );
}

/** tsx's `./esm/api` import target next to `base`, read from its package.json exports (tsx's CommonJS build of it cannot register from ESM). */
function tsxEsmApi(base: string): string | null {
  let manifestPath: string;
  try {
    manifestPath = createRequire(base).resolve("tsx/package.json");
  } catch {
    return null;
  }
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { exports?: Record<string, unknown> };
  const entry = manifest.exports?.["./esm/api"];
  const target = typeof entry === "string" ? entry : importTarget(entry);
  return target ? pathToFileURL(join(dirname(manifestPath), target)).href : null;
}

function importTarget(entry: unknown): string | null {
  if (entry === null || typeof entry !== "object") return null;
  const condition = (entry as { import?: unknown }).import;
  if (typeof condition === "string") return condition;
  const fallback = (condition as { default?: unknown } | undefined)?.default;
  return typeof fallback === "string" ? fallback : null;
}

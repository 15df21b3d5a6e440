import { existsSync, readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";

/**
 * True when Node (and tsx) load this file as CommonJS: `.cjs`/`.cts` always;
 * `.js`/`.ts`/`.tsx` when the nearest package.json does not say
 * `"type": "module"` (or there is none).
 */
export function loadsAsCommonJs(modulePath: string): boolean {
  const extension = extname(modulePath).toLowerCase();
  if (extension === ".cjs" || extension === ".cts") return true;
  if (extension === ".mjs" || extension === ".mts") return false;
  for (let directory = dirname(modulePath); ; directory = dirname(directory)) {
    const manifest = join(directory, "package.json");
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, "utf8")) as { type?: unknown }).type !== "module";
      } catch {
        return true;
      }
    }
    if (dirname(directory) === directory) return true;
  }
}

/** Failures that mean "a CommonJS module tried to load an ES module" (the core is ESM only). */
export function isEsmFromCommonJsFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ERR_PACKAGE_PATH_NOT_EXPORTED" || code === "ERR_REQUIRE_ESM") return true;
  return (
    error instanceof SyntaxError && /import statement outside a module|Unexpected token 'export'/.test(error.message)
  );
}

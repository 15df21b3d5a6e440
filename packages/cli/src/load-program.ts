import { register } from "node:module";
import { relative } from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidInputError, type AgenticFunction } from "@openprogram/session-context";
import { resolveAgenticExport } from "@openprogram/session-context/host";
import { isEsmFromCommonJsFailure, loadsAsCommonJs } from "./module-scope.js";
import { parseProgramSpec, type ProgramSpec } from "./program-spec.js";
import { formatSyntaxLocation, syntaxErrorLocation } from "./syntax-error-location.js";

/** An agentic function loaded from a module. */
export interface LoadedProgram {
  spec: ProgramSpec;
  /** The export it came from (`default` for a default export). */
  exportName: string;
  /** The agentic function itself. */
  fn: AgenticFunction<unknown, unknown>;
}

/**
 * Loads `module[#export]`: `.js`/`.mjs`/`.cjs` with a dynamic import,
 * `.ts`/`.mts`/`.cts`/`.tsx` through tsx, and picks the export by the core's
 * rule (`resolveAgenticExport`: the named export, else the agentic default
 * export, else the only agentic export), the same rule `--isolate` follows
 * in the child. Throws InvalidInputError (missing module or export, module
 * that fails to load, several candidates) or NotAgenticFunctionError, each
 * naming what to fix.
 */
export async function loadProgram(spec: string | ProgramSpec, cwd = process.cwd()): Promise<LoadedProgram> {
  const parsed = typeof spec === "string" ? parseProgramSpec(spec, cwd) : spec;
  const namespace = await importModule(parsed, cwd);
  const { exportName, fn } = resolveAgenticExport(namespace, parsed.exportName, {
    module: displayPath(parsed.modulePath, cwd),
  });
  return { spec: parsed, exportName, fn };
}

let fallbackRegistered = false;

/**
 * A program may import @openprogram packages without installing them: those
 * it does not have resolve to the CLI's own (see own-packages-hook.ts).
 * Registered once per process, before the first program loads.
 */
function useOwnPackagesAsFallback(): void {
  if (fallbackRegistered) return;
  fallbackRegistered = true;
  register(new URL("./own-packages-hook.js", import.meta.url), {
    data: { cliModuleUrl: import.meta.url },
  });
}

async function importModule(spec: ProgramSpec, cwd: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(spec.modulePath).href;
  useOwnPackagesAsFallback();
  try {
    if (spec.kind === "javascript") return (await import(url)) as Record<string, unknown>;
    // tsx is imported only here: the other commands never pay for the TypeScript loader.
    const { tsImport } = await import("tsx/esm/api");
    return (await tsImport(url, { parentURL: import.meta.url })) as Record<string, unknown>;
  } catch (error) {
    const shown = displayPath(spec.modulePath, cwd);
    const location = syntaxErrorLocation(error, spec.modulePath);
    if (location)
      throw new InvalidInputError(
        `Could not load ${shown}: a syntax error at ${formatSyntaxLocation(location, displayPath(location.file, cwd))}`,
        { cause: error },
      );
    const detail = (error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error)).replace(/\.$/, "");
    const hint =
      isEsmFromCommonJsFailure(error) && loadsAsCommonJs(spec.modulePath)
        ? ` ${shown} is loaded as CommonJS (no "type": "module" in the nearest package.json), and @openprogram/session-context is an ES module: rename it to ${spec.kind === "typescript" ? ".mts" : ".mjs"}, or add "type": "module" to a package.json beside it.`
        : "";
    throw new InvalidInputError(`Could not load ${shown}: ${detail}.${hint}`, { cause: error });
  }
}

function displayPath(path: string, cwd: string): string {
  const shown = relative(cwd, path);
  return shown && !shown.startsWith("..") ? shown : path;
}

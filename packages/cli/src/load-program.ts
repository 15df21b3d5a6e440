import { relative } from "node:path";
import { pathToFileURL } from "node:url";
import {
  InvalidInputError,
  isAgenticFunction,
  NotAgenticFunctionError,
  type AgenticFunction,
} from "@openprogram/session-context";
import { isEsmFromCommonJsFailure, loadsAsCommonJs } from "./module-scope.js";
import { parseProgramSpec, type ProgramSpec } from "./program-spec.js";

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
 * `.ts`/`.mts`/`.cts`/`.tsx` through tsx. With no `#export`, takes the default
 * export if it is an agentic function, else the only agentic export. Throws
 * InvalidInputError (missing module or export, module that fails to load,
 * several candidates) or NotAgenticFunctionError, each naming what to fix.
 */
export async function loadProgram(spec: string | ProgramSpec, cwd = process.cwd()): Promise<LoadedProgram> {
  const parsed = typeof spec === "string" ? parseProgramSpec(spec, cwd) : spec;
  const namespace = await importModule(parsed, cwd);
  const shown = displayPath(parsed.modulePath, cwd);
  const agentic = Object.entries(namespace).filter(([, value]) => isAgenticFunction(value));
  const names = agentic.map(([name]) => name);
  if (parsed.exportName !== undefined) {
    const name = parsed.exportName;
    if (!(name in namespace)) {
      throw new InvalidInputError(`${shown} has no export named '${name}'. ${describeCandidates(names)}`);
    }
    const value = namespace[name];
    if (!isAgenticFunction(value)) {
      throw new NotAgenticFunctionError(
        `Export '${name}' of ${shown} is not an agentic function (it is ${describeValue(value)}). Declare it with agenticFunction({ name, doc }, impl) from @openprogram/session-context. ${describeCandidates(names)}`,
      );
    }
    return { spec: parsed, exportName: name, fn: value };
  }
  const fallback = namespace.default;
  if (isAgenticFunction(fallback)) return { spec: parsed, exportName: "default", fn: fallback };
  const named = agentic.filter(([name]) => name !== "default");
  const only = named.length === 1 ? named[0] : undefined;
  if (only) return { spec: parsed, exportName: only[0], fn: only[1] as AgenticFunction<unknown, unknown> };
  if (named.length === 0) {
    throw new NotAgenticFunctionError(
      `${shown} exports no agentic function. Export one declared with agenticFunction({ name, doc }, impl) from @openprogram/session-context.`,
    );
  }
  throw new InvalidInputError(
    `${shown} exports ${named.length} agentic functions (${names.join(", ")}) and no agentic default export; pick one, e.g. ${parsed.raw}#${names[0] ?? ""}.`,
  );
}

async function importModule(spec: ProgramSpec, cwd: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(spec.modulePath).href;
  try {
    if (spec.kind === "javascript") return (await import(url)) as Record<string, unknown>;
    // tsx is imported only here: the other commands never pay for the TypeScript loader.
    const { tsImport } = await import("tsx/esm/api");
    return (await tsImport(url, { parentURL: import.meta.url })) as Record<string, unknown>;
  } catch (error) {
    const shown = displayPath(spec.modulePath, cwd);
    const detail = (error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error)).replace(/\.$/, "");
    const hint =
      isEsmFromCommonJsFailure(error) && loadsAsCommonJs(spec.modulePath)
        ? ` ${shown} is loaded as CommonJS (no "type": "module" in the nearest package.json), and @openprogram/session-context is an ES module: rename it to ${spec.kind === "typescript" ? ".mts" : ".mjs"}, or add "type": "module" to a package.json beside it.`
        : "";
    throw new InvalidInputError(`Could not load ${shown}: ${detail}.${hint}`, { cause: error });
  }
}

function describeCandidates(names: readonly string[]): string {
  return names.length === 0 ? "It exports no agentic function." : `Its agentic exports: ${names.join(", ")}.`;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return "a plain function";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function displayPath(path: string, cwd: string): string {
  const shown = relative(cwd, path);
  return shown && !shown.startsWith("..") ? shown : path;
}

import { isAgenticFunction, type AgenticFunction } from "@openprogram/session-context";
import type { LoadFailure } from "../protocol.js";

/** The program, or why it cannot run. */
export type LoadedProgram =
  | { ok: true; program: AgenticFunction<unknown, unknown> }
  | { ok: false; kind: LoadFailure; message: string };

/**
 * Imports the module (registering tsx first for TypeScript) and checks that
 * the export is an agentic function; runs nothing else.
 */
export async function loadProgram(
  moduleUrl: string,
  exportName: string,
  typeScriptLoader: string | null,
): Promise<LoadedProgram> {
  const label = `${decodeURI(new URL(moduleUrl).pathname)}#${exportName}`;
  let namespace: Record<string, unknown>;
  try {
    if (typeScriptLoader) await registerTypeScript(typeScriptLoader);
    namespace = (await import(moduleUrl)) as Record<string, unknown>;
  } catch (error) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { ok: false, kind: "import_failed", message: `Could not load ${label} in the child process: ${detail}` };
  }
  const agenticExports = Object.keys(namespace).filter((name) => isAgenticFunction(namespace[name]));
  const offered =
    agenticExports.length > 0
      ? `its agentic functions are: ${agenticExports.join(", ")}`
      : "it exports no agentic function";
  if (!(exportName in namespace)) {
    return {
      ok: false,
      kind: "missing_export",
      message: `${label}: the module has no export named ${JSON.stringify(exportName)}; ${offered}.`,
    };
  }
  const candidate = namespace[exportName];
  if (!isAgenticFunction(candidate)) {
    return {
      ok: false,
      kind: "not_agentic",
      message: `${label} is ${describe(candidate)}, not an agentic function (made with agenticFunction() from @openprogram/session-context); ${offered}.`,
    };
  }
  return { ok: true, program: candidate };
}

async function registerTypeScript(loaderUrl: string): Promise<void> {
  const api = (await import(loaderUrl)) as { register?: unknown };
  if (typeof api.register !== "function")
    throw new Error(`${loaderUrl} has no register(); @openprogram/process-runner needs tsx 4.x.`);
  (api.register as () => unknown)();
}

function describe(value: unknown): string {
  if (typeof value === "function") return "a plain function";
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

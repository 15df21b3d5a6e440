import { NotAgenticFunctionError, type AgenticFunction } from "@openprogram/session-context";
import { resolveAgenticExport } from "@openprogram/session-context/host";
import type { LoadFailure } from "../protocol.js";

/** The program and the export it came from, or why it cannot run. */
export type LoadedProgram =
  | { ok: true; exportName: string; program: AgenticFunction<unknown, unknown> }
  | { ok: false; kind: LoadFailure; message: string };

/**
 * Imports the module (registering tsx first for TypeScript) and picks the
 * export by the core's rule (`resolveAgenticExport`: the named export, else
 * the agentic default, else the only agentic export), exactly as an
 * in-process run does; runs nothing else.
 */
export async function loadProgram(
  moduleUrl: string,
  exportName: string | null,
  typeScriptLoader: string | null,
): Promise<LoadedProgram> {
  const modulePath = decodeURI(new URL(moduleUrl).pathname);
  let namespace: Record<string, unknown>;
  try {
    if (typeScriptLoader) await registerTypeScript(typeScriptLoader);
    namespace = (await import(moduleUrl)) as Record<string, unknown>;
  } catch (error) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const label = exportName === null ? modulePath : `${modulePath}#${exportName}`;
    return { ok: false, kind: "import_failed", message: `Could not load ${label} in the child process: ${detail}` };
  }
  try {
    const resolved = resolveAgenticExport(namespace, exportName ?? undefined, { module: modulePath });
    return { ok: true, exportName: resolved.exportName, program: resolved.fn };
  } catch (error) {
    const kind: LoadFailure = error instanceof NotAgenticFunctionError ? "not_agentic" : "unusable_export";
    return { ok: false, kind, message: (error as Error).message };
  }
}

async function registerTypeScript(loaderUrl: string): Promise<void> {
  const api = (await import(loaderUrl)) as { register?: unknown };
  if (typeof api.register !== "function")
    throw new Error(`${loaderUrl} has no register(); @openprogram/process-runner needs tsx 4.x.`);
  (api.register as () => unknown)();
}

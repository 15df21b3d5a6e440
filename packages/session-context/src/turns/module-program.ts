import { existsSync } from "node:fs";
import { extname } from "node:path";
import { pathToFileURL } from "node:url";
import { isAgenticFunction, type AgenticFunction } from "../agentic/agentic-function.js";
import { TurnNotResumableError } from "../errors.js";

const JAVASCRIPT = new Set([".js", ".mjs", ".cjs"]);

/**
 * Loads the agentic function a `module:<path>#<export>` ref names, for
 * resuming from code. JavaScript only: TypeScript needs a loader, which the
 * CLI has (`openprogram resume`). Throws TurnNotResumableError naming what is
 * missing.
 */
export async function loadModuleProgram(
  modulePath: string,
  exportName: string,
  turn: string,
): Promise<AgenticFunction<never, unknown>> {
  if (!existsSync(modulePath))
    throw new TurnNotResumableError(`${turn} ran ${modulePath}#${exportName}, and that module no longer exists.`);
  if (!JAVASCRIPT.has(extname(modulePath).toLowerCase())) {
    throw new TurnNotResumableError(
      `${turn} ran ${modulePath}#${exportName}, which resumeTurn cannot load by itself (TypeScript needs a loader): ` +
        "resume it with `openprogram resume`, or pass resumeTurn({ program }).",
    );
  }
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(modulePath).href)) as Record<string, unknown>;
  } catch (error) {
    throw new TurnNotResumableError(
      `${turn} ran ${modulePath}#${exportName}, which could not be loaded: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const candidate = namespace[exportName];
  if (!isAgenticFunction(candidate)) {
    throw new TurnNotResumableError(
      `${turn} ran ${modulePath}#${exportName}, and that module has no agentic function named '${exportName}' any more.`,
    );
  }
  return candidate;
}

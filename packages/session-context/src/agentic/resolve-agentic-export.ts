import { InvalidInputError, NotAgenticFunctionError } from "../errors.js";
import { describeValue } from "../messages/describe-value.js";
import { isAgenticFunction, type AgenticFunction } from "./agentic-function.js";

/** The agentic function chosen from a module, and the export it came from. */
export interface ResolvedAgenticExport {
  /** The export's name (`default` for a default export). */
  exportName: string;
  fn: AgenticFunction<unknown, unknown>;
}

/** Options of `resolveAgenticExport`. */
export interface ResolveAgenticExportOptions {
  /** How messages name the module (a path as the user wrote it); default "the module". */
  module?: string;
}

const DECLARE_ONE = "agenticFunction({ name, doc }, impl) from @openprogram/session-context";

/**
 * Picks the agentic function to run from an imported module, by the one rule
 * every entry uses (`openprogram run`, `--isolate`, `serve --program`, the
 * process runner): the named export if `exportName` is given; else the
 * `default` export if it is agentic; else the only agentic export. Anything
 * else throws, naming the module's agentic exports: InvalidInputError (no
 * such export, or several candidates and no name) or NotAgenticFunctionError
 * (the export is not an agentic function, or there is none).
 */
export function resolveAgenticExport(
  moduleNamespace: Readonly<Record<string, unknown>>,
  exportName?: string,
  options: ResolveAgenticExportOptions = {},
): ResolvedAgenticExport {
  const module = options.module ?? "the module";
  const agentic = Object.keys(moduleNamespace).filter((name) => isAgenticFunction(moduleNamespace[name]));
  if (exportName !== undefined) {
    if (!Object.hasOwn(moduleNamespace, exportName)) {
      throw new InvalidInputError(`${module} has no export named '${exportName}'. ${listAgentic(agentic)}`);
    }
    const value = moduleNamespace[exportName];
    if (!isAgenticFunction(value)) {
      const what = typeof value === "function" ? "a plain function" : describeValue(value);
      throw new NotAgenticFunctionError(
        `Export '${exportName}' of ${module} is not an agentic function (it is ${what}). Declare it with ${DECLARE_ONE}. ${listAgentic(agentic)}`,
      );
    }
    return { exportName, fn: value };
  }
  const fallback = moduleNamespace.default;
  if (isAgenticFunction(fallback)) return { exportName: "default", fn: fallback };
  const [only, ...others] = agentic;
  if (only !== undefined && others.length === 0) {
    return { exportName: only, fn: moduleNamespace[only] as AgenticFunction<unknown, unknown> };
  }
  if (only === undefined) {
    throw new NotAgenticFunctionError(
      `${module} exports no agentic function. Export one declared with ${DECLARE_ONE}.`,
    );
  }
  throw new InvalidInputError(
    `${module} exports ${agentic.length} agentic functions (${agentic.join(", ")}) and no agentic default export; pick one, e.g. ${module}#${only}.`,
  );
}

function listAgentic(names: readonly string[]): string {
  return names.length === 0 ? "It exports no agentic function." : `Its agentic exports: ${names.join(", ")}.`;
}

import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { InvalidInputError } from "@openprogram/session-context";
import type { RunInChildOptions } from "../types.js";
import { assertJsonInput } from "./json-input.js";
import { typeScriptLoaderFor } from "./typescript-loader.js";

/** Default time a stop gives the child to cancel its own work before SIGKILL. */
export const DEFAULT_GRACE_MS = 2000;

/** Everything needed to start the child, checked before any process exists. */
export interface LaunchPlan {
  modulePath: string;
  moduleUrl: string;
  /** null: the child picks the export by the core's rule. */
  exportName: string | null;
  /** `<module>#<export>` (or the module alone), for messages. */
  label: string;
  input: unknown;
  timeoutMs: number | null;
  graceMs: number;
  env: Record<string, string>;
  cwd: string;
  /** tsx's ESM API for a TypeScript module, registered in the child before the module loads; null for JavaScript. */
  typeScriptLoader: string | null;
}

/** Validates `runInChild`'s options; every problem is an InvalidInputError saying what to fix. */
export function planLaunch(options: RunInChildOptions): LaunchPlan {
  if (options === null || typeof options !== "object")
    throw new InvalidInputError("runInChild(options): options must be { module, export?, input?, ... }.");
  const cwd = checkCwd(options.cwd);
  const modulePath = checkModule(options.module, cwd);
  const exportName = options.export ?? null;
  if (exportName !== null && (typeof exportName !== "string" || exportName === ""))
    throw new InvalidInputError(
      "runInChild: export must be the name of an exported agentic function (or absent: the agentic default export, else the only agentic export).",
    );
  const label = exportName === null ? modulePath : `${modulePath}#${exportName}`;
  assertJsonInput(options.input, `runInChild(${label})`);
  return {
    modulePath,
    moduleUrl: pathToFileURL(modulePath).href,
    exportName,
    label,
    input: options.input,
    timeoutMs: options.timeoutMs === undefined ? null : checkDuration("timeoutMs", options.timeoutMs, 1),
    graceMs: options.graceMs === undefined ? DEFAULT_GRACE_MS : checkDuration("graceMs", options.graceMs, 0),
    env: checkEnv(options.env),
    cwd,
    typeScriptLoader: typeScriptLoaderFor(modulePath),
  };
}

function checkCwd(cwd: string | undefined): string {
  if (cwd === undefined) return process.cwd();
  if (typeof cwd !== "string" || cwd === "") throw new InvalidInputError("runInChild: cwd must be a directory path.");
  const absolute = resolve(cwd);
  if (!statOrNull(absolute)?.isDirectory())
    throw new InvalidInputError(`runInChild: cwd ${absolute} is not an existing directory.`);
  return absolute;
}

function checkModule(module: unknown, cwd: string): string {
  if (typeof module !== "string" || module.trim() === "") {
    throw new InvalidInputError(
      "runInChild: module must be the path of a .js or .ts file exporting an agentic function.",
    );
  }
  let path: string;
  if (module.startsWith("file:")) {
    try {
      path = fileURLToPath(module);
    } catch {
      throw new InvalidInputError(`runInChild: module ${JSON.stringify(module)} is not a valid file: URL.`);
    }
  } else if (isAbsolute(module) || module.startsWith(".")) {
    path = resolve(cwd, module);
  } else {
    // A bare name is ambiguous (a package? a file in cwd?); a path says which file runs.
    throw new InvalidInputError(
      `runInChild: module ${JSON.stringify(module)} must be a file path (absolute, or relative starting with ./) or a file: URL.`,
    );
  }
  const stat = statOrNull(path);
  if (!stat)
    throw new InvalidInputError(
      `runInChild: module ${path} does not exist. Check the path (relative paths are resolved from ${cwd}).`,
    );
  if (!stat.isFile()) throw new InvalidInputError(`runInChild: module ${path} is not a file.`);
  return path;
}

function checkDuration(name: string, value: unknown, minimum: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < minimum) {
    throw new InvalidInputError(
      `runInChild: ${name} must be a number of milliseconds >= ${minimum}, not ${String(value)}.`,
    );
  }
  return value;
}

function checkEnv(env: unknown): Record<string, string> {
  if (env === undefined) return {};
  if (env === null || typeof env !== "object" || Array.isArray(env))
    throw new InvalidInputError("runInChild: env must be an object of string values.");
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string")
      throw new InvalidInputError(`runInChild: env.${name} must be a string, not ${typeof value}.`);
  }
  return env as Record<string, string>;
}

function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

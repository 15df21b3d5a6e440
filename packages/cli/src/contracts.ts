// The packages the CLI plugs in (dispatcher, research harness, process
// runner) are imported lazily, only by the commands that need them, so that
// `--help` and `sessions` stay fast; their types are imported as types only.
import type * as Dispatcher from "@openprogram/dispatcher";
import type * as Mcp from "@openprogram/mcp";
import type * as ProcessRunner from "@openprogram/process-runner";
import type * as Research from "@openprogram/research";
import { PackageUnavailableError } from "./errors.js";

/** `@openprogram/dispatcher`. */
export type DispatcherModule = typeof Dispatcher;
/** `@openprogram/research`. */
export type ResearchModule = typeof Research;
/** `@openprogram/process-runner`. */
export type ProcessRunnerModule = typeof ProcessRunner;
/** `@openprogram/mcp`. */
export type McpModule = typeof Mcp;

/** Imports `@openprogram/dispatcher` (serve, resolveServeConfig), or says why it cannot. */
export async function loadDispatcher(): Promise<DispatcherModule> {
  return checked(
    "@openprogram/dispatcher",
    await attempt("@openprogram/dispatcher", () => import("@openprogram/dispatcher")),
    ["serve", "resolveServeConfig"],
  );
}

/** Imports `@openprogram/research` (researchAgent, runResearch, validateResearchRequest), or says why it cannot. */
export async function loadResearch(): Promise<ResearchModule> {
  return checked(
    "@openprogram/research",
    await attempt("@openprogram/research", () => import("@openprogram/research")),
    ["researchAgent", "researchProgram", "runResearch", "validateResearchRequest"],
  );
}

/** Imports `@openprogram/process-runner` (isolatedProgram), or says why it cannot. */
export async function loadProcessRunner(): Promise<ProcessRunnerModule> {
  return checked(
    "@openprogram/process-runner",
    await attempt("@openprogram/process-runner", () => import("@openprogram/process-runner")),
    ["isolatedProgram"],
  );
}

/** Imports `@openprogram/mcp` (mcpTools, serveProgramsOverStdio), or says why it cannot. */
export async function loadMcp(): Promise<McpModule> {
  return checked("@openprogram/mcp", await attempt("@openprogram/mcp", () => import("@openprogram/mcp")), [
    "mcpTools",
    "runtimeWithTools",
    "configuredServer",
    "closeMcpServers",
    "serveProgramsOverStdio",
  ]);
}

async function attempt<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED") {
      throw new PackageUnavailableError(
        name,
        `it could not be imported (${(error as Error).message.split("\n")[0] ?? code})`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** A stale or mismatched install can load and still lack a function; say so instead of failing with a TypeError later. */
function checked<T extends object>(name: string, namespace: T, required: readonly string[]): T {
  const missing = required.filter((member) => typeof (namespace as Record<string, unknown>)[member] !== "function");
  if (missing.length > 0) throw new PackageUnavailableError(name, `it does not export ${missing.join(", ")}`);
  return namespace;
}

import { activeContext } from "../context/storage.js";
import { RuntimeMissingError } from "../errors.js";
import { createRuntime } from "./create-runtime.js";
import type { Runtime } from "./types.js";

/** What decides a turn's runtime: the `runtime` and `createRuntimeIfNone` options of sessionContext. */
export interface ResolveRuntimeOptions {
  /** The runtime to use; null for none. Absent: the enclosing context's, else one created from configuration. */
  runtime?: Runtime | null | undefined;
  /** Create a runtime from configuration when none is given or inherited (default true). */
  createRuntimeIfNone?: boolean | undefined;
}

/**
 * The runtime a session context installed here with these options gets, by
 * the one rule every entry shares: the runtime given; else the enclosing
 * context's; else one created from configuration (null when no provider is
 * configured, ProviderConfigError when the configuration is broken). An entry
 * that checks for a model before it enters a session calls this, so it never
 * re-derives what sessionContext will pick.
 */
export function resolveRuntime(options: ResolveRuntimeOptions = {}): Runtime | null {
  if (options.runtime !== undefined) return options.runtime;
  const inherited = activeContext()?.runtime;
  if (inherited) return inherited;
  return options.createRuntimeIfNone === false ? null : createRuntime();
}

/** resolveRuntime for work that always calls the model: no runtime is a RuntimeMissingError saying what needs one. */
export function requireRuntime(neededFor: string, options: ResolveRuntimeOptions = {}): Runtime {
  const runtime = resolveRuntime(options);
  if (runtime === null) throw new RuntimeMissingError(neededFor);
  return runtime;
}

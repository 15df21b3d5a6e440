import { createRuntime, RuntimeMissingError, type Runtime } from "@openprogram/session-context";

/**
 * The runtime from configuration, resolved before any session is entered so
 * that a broken configuration (ProviderConfigError, naming the variable) is
 * a usage error that leaves nothing behind. Null when no provider is set.
 */
export function configuredRuntime(): Runtime | null {
  return createRuntime();
}

/** Like configuredRuntime(), for commands that always call the model: no provider is a RuntimeMissingError. */
export function requireRuntime(): Runtime {
  const runtime = createRuntime();
  if (!runtime) throw new RuntimeMissingError("this command calls the model");
  return runtime;
}

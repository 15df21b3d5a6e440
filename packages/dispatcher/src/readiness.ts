import type { Runtime, SessionDB } from "@openprogram/session-context";
import { createRuntime, resolveRuntimeConfig } from "@openprogram/session-context/runtime";
import { checkStore } from "@openprogram/session-context/store";

/** One readiness check. */
export interface ReadinessCheck {
  ok: boolean;
  detail: string;
}

/** What `GET /readyz` answers (HTTP 200 when ready, 503 otherwise). */
export interface ReadinessReport {
  status: "ready" | "not_ready";
  checks: { store: ReadinessCheck; git: ReadinessCheck; provider: ReadinessCheck; cluster?: ReadinessCheck };
  /** Why it is not ready, one sentence per failed check, each saying what to do. */
  reasons: string[];
}

/** What readiness asks of a cluster (structural, so that the cluster can name ReadinessCheck without a cycle). */
export interface ClusterHealth {
  check(): Promise<ReadinessCheck>;
}

/** What readiness is judged on. */
export interface ReadinessInput {
  db: SessionDB;
  /** The dispatcher's `runtime` option: undefined means "from configuration". */
  runtime: Runtime | null | undefined;
  /** Set once shutdown began. */
  shuttingDown: string | null;
  /** In a cluster: its database must answer. */
  cluster?: ClusterHealth | null;
}

/** Store writable, git usable, provider configured (or explicitly none), the cluster's database reachable, not shutting down. */
export async function checkReadiness(input: ReadinessInput): Promise<ReadinessReport> {
  // The store's own probe (a real write under the sessions root, and git): storage is the core's business.
  const store = await checkStore({ db: input.db });
  const writable = store.writable.ok
    ? store.writable
    : { ok: false, detail: `${store.writable.detail} (Here: --sessions-root or OPENPROGRAM_HOME.)` };
  const checks = {
    store: writable,
    git: store.git,
    provider: probeProvider(input.runtime),
    ...(input.cluster ? { cluster: await input.cluster.check() } : {}),
  };
  const reasons = Object.values(checks)
    .filter((check) => !check.ok)
    .map((check) => check.detail);
  if (input.shuttingDown !== null) reasons.push(`The dispatcher is shutting down (${input.shuttingDown}).`);
  return { status: reasons.length === 0 ? "ready" : "not_ready", checks, reasons };
}

function probeProvider(runtime: Runtime | null | undefined): ReadinessCheck {
  if (runtime === null) return { ok: true, detail: "none (the dispatcher was started without a model)" };
  if (runtime !== undefined) return { ok: true, detail: `${runtime.provider.name} (${runtime.model})` };
  try {
    const resolved = resolveRuntimeConfig();
    if (resolved.explicitlyNone) return { ok: true, detail: `none (${resolved.origin} says so)` };
    // A replay needs no provider configured: the recording answers.
    const built = resolved.config || process.env.OPENPROGRAM_REPLAY ? createRuntime() : null;
    if (!resolved.config && !built) {
      return {
        ok: false,
        detail:
          "No model provider is configured: set OPENPROGRAM_PROVIDER (openai, anthropic or scripted) with its key or base URL, " +
          "or OPENPROGRAM_PROVIDER=none to run programs without a model.",
      };
    }
    return {
      ok: true,
      detail: `${built?.provider.name ?? resolved.config?.provider} (${built?.model ?? ""}) from ${resolved.config ? resolved.origin : "OPENPROGRAM_REPLAY"}`,
    };
  } catch (error) {
    return { ok: false, detail: `The model provider is misconfigured: ${(error as Error).message}` };
  }
}

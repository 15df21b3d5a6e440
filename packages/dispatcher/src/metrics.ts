// Prometheus metrics of one dispatcher (prom-client), in a registry of its own so two dispatchers in one process
// never share counters.
import type { SessionEvent } from "@openprogram/session-context";
import { costOf, llmNodeUsage, priceFor, type PriceTable } from "@openprogram/session-context/usage";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** Labels of a turn: where it came from and what it ran ("chat" and "resume" turns are named by their kind). */
export interface TurnLabels {
  source: string;
  program: string;
}

/** Why a model request was not sent: a budget, an unpriced model under a cost budget, the provider's capacity. */
const REFUSALS: ReadonlySet<string> = new Set(["budget_exceeded", "budget_unpriced_model", "rate_limited"]);

const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];
const MODEL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80];

/** The dispatcher's metrics and the hooks that move them. */
export class DispatcherMetrics {
  readonly registry = new Registry();
  private priceTable: PriceTable | null | undefined;

  private readonly started = new Counter({
    name: "openprogram_turns_started_total",
    help: "Turns started, by source and program.",
    labelNames: ["source", "program"],
    registers: [this.registry],
  });
  private readonly finished = new Counter({
    name: "openprogram_turns_finished_total",
    help: "Turns that finished with a result, by source and program.",
    labelNames: ["source", "program"],
    registers: [this.registry],
  });
  private readonly failed = new Counter({
    name: "openprogram_turns_failed_total",
    help: "Turns that failed or were cancelled, by source, program and outcome.",
    labelNames: ["source", "program", "outcome"],
    registers: [this.registry],
  });
  private readonly turnDuration = new Histogram({
    name: "openprogram_turn_duration_seconds",
    help: "How long turns took, by source and program.",
    labelNames: ["source", "program"],
    buckets: TURN_BUCKETS,
    registers: [this.registry],
  });
  private readonly modelDuration = new Histogram({
    name: "openprogram_model_request_duration_seconds",
    help: "How long model requests took, by model and status.",
    labelNames: ["model", "status"],
    buckets: MODEL_BUCKETS,
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: "openprogram_model_tokens_total",
    help: "Tokens the providers reported, by model and type (input, output, cached_input).",
    labelNames: ["model", "type"],
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: "openprogram_model_cost_dollars_total",
    help: "US dollars the model requests cost at the price table's prices, by model (models without a price are not counted).",
    labelNames: ["model"],
    registers: [this.registry],
  });
  private readonly refused = new Counter({
    name: "openprogram_model_requests_refused_total",
    help: "Model requests not sent, by model and reason (budget_exceeded, budget_unpriced_model, rate_limited).",
    labelNames: ["model", "reason"],
    registers: [this.registry],
  });
  private readonly connections = new Gauge({
    name: "openprogram_websocket_connections",
    help: "Open WebSocket connections.",
    registers: [this.registry],
  });
  private readonly sessions = new Gauge({
    name: "openprogram_sessions",
    help: "Sessions with a turn in this dispatcher, by state (running, needs_input).",
    labelNames: ["state"],
    registers: [this.registry],
  });
  /** Where the cluster's rejected-message counts come from, and what was exported of them so far. */
  private clusterRejections: (() => Readonly<Record<string, number>>) | null = null;
  private readonly rejectionsExported = new Map<string, number>();
  private readonly rejected = new Counter({
    name: "openprogram_cluster_messages_rejected_total",
    help: "Cluster channel messages dropped, by reason (unsigned, forged, replayed).",
    labelNames: ["reason"],
    registers: [this.registry],
    collect: () => this.collectRejections(),
  });
  /** The last status of each session this dispatcher saw running or waiting. */
  private readonly states = new Map<string, "running" | "needs_input">();

  /** `prices`: the table requests are priced with (read at the first request that reports usage; null: none). */
  constructor(private readonly prices: () => PriceTable | null = () => null) {
    // Process metrics, event-loop lag (nodejs_eventloop_lag_seconds) among them.
    collectDefaultMetrics({ register: this.registry });
    for (const state of ["running", "needs_input"]) this.sessions.set({ state }, 0);
  }

  turnStarted(labels: TurnLabels): void {
    this.started.inc({ ...labels });
  }

  turnEnded(labels: TurnLabels, outcome: "done" | "failed" | "cancelled", seconds: number): void {
    if (outcome === "done") this.finished.inc({ ...labels });
    else this.failed.inc({ ...labels, outcome });
    this.turnDuration.observe({ ...labels }, seconds);
  }

  connectionOpened(): void {
    this.connections.inc();
  }

  connectionClosed(): void {
    this.connections.dec();
  }

  /** Model requests (an llm node once it is no longer running) and session states, from the core's events. */
  observe(event: SessionEvent): void {
    if (event.type === "status") {
      if (event.status === "running" || event.status === "needs_input") this.states.set(event.sessionId, event.status);
      else this.states.delete(event.sessionId);
      for (const state of ["running", "needs_input"] as const)
        this.sessions.set({ state }, [...this.states.values()].filter((value) => value === state).length);
      return;
    }
    if (event.type !== "node" || event.node.role !== "llm") return;
    const { metadata } = event.node;
    const status = typeof metadata.status === "string" ? metadata.status : "";
    if (status === "running" || status === "") return;
    const model = event.node.name ?? "";
    const code = (metadata.error as { code?: unknown } | null | undefined)?.code;
    if (status === "failed" && typeof code === "string" && REFUSALS.has(code))
      this.refused.inc({ model, reason: code });
    if (typeof metadata.duration_seconds === "number")
      this.modelDuration.observe({ model, status }, metadata.duration_seconds);
    const usage = (metadata.usage ?? {}) as Record<string, unknown>;
    for (const [type, key] of [
      ["input", "inputTokens"],
      ["output", "outputTokens"],
      ["cached_input", "cachedInputTokens"],
    ] as const) {
      const count = usage[key];
      if (typeof count === "number" && count > 0) this.tokens.inc({ model, type }, count);
    }
    this.countCost(event.node);
  }

  /** What a request cost, when it reported usage and its model has a price. */
  private countCost(node: Parameters<typeof llmNodeUsage>[0]): void {
    const usage = llmNodeUsage(node);
    if (!usage?.reported) return;
    const table = (this.priceTable ??= this.prices());
    if (!table) return;
    const found = priceFor(table, usage.model);
    if ("missing" in found) return;
    const { inputTokens, outputTokens, cachedInputTokens } = usage;
    const counts = { calls: 1, callsWithoutUsage: 0, inputTokens, outputTokens, cachedInputTokens };
    this.cost.inc({ model: usage.model }, costOf(counts, found.price));
  }

  /** In a cluster: exports its counts of dropped channel messages (read at each scrape). */
  watchClusterRejections(source: () => Readonly<Record<string, number>>): void {
    this.clusterRejections = source;
    for (const reason of ["unsigned", "forged", "replayed"]) this.rejected.inc({ reason }, 0);
  }

  private collectRejections(): void {
    if (!this.clusterRejections) return;
    for (const [reason, count] of Object.entries(this.clusterRejections())) {
      const added = count - (this.rejectionsExported.get(reason) ?? 0);
      if (added > 0) this.rejected.inc({ reason }, added);
      this.rejectionsExported.set(reason, count);
    }
  }

  /** The Prometheus text exposition. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

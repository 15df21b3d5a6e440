// OTLP export of the core's spans, configured by the standard OTEL_* variables. The SDK and exporter
// packages are imported only here and only when an endpoint is configured, so a process without one
// never loads them.
import { trace } from "@opentelemetry/api";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";

type ExportResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];
/** ExportResultCode.SUCCESS (@opentelemetry/core), not imported: the core does not load the SDK's packages eagerly. */
const SUCCESS: ExportResult["code"] = 0;

/** The protocols the exporter speaks (OTLP over HTTP); the standard default is http/protobuf. */
export const TRACE_EXPORT_PROTOCOLS = ["http/protobuf", "http/json"] as const;

/** A running export: flush it before a short-lived process exits. */
export interface TraceExport {
  /** The protocol in use. */
  readonly protocol: (typeof TRACE_EXPORT_PROTOCOLS)[number];
  /** Sends the spans ended so far; waits at most `waitMs` (default: the export timeout; spans left are dropped). */
  flush(waitMs?: number): Promise<void>;
  /** Flushes and stops exporting. */
  shutdown(waitMs?: number): Promise<void>;
}

/** Options of `startTraceExport`. */
export interface TraceExportOptions {
  env?: NodeJS.ProcessEnv;
  /** `service.name` unless OTEL_SERVICE_NAME says otherwise (default "openprogram"). */
  serviceName?: string;
  /** Where the one warning goes (an unreachable collector, an unsupported protocol); default process.emitWarning. */
  warn?: (message: string) => void;
}

/** True when the standard variables ask for trace export (an OTLP endpoint, not disabled). */
export function traceExportConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true") return false;
  if ((env.OTEL_TRACES_EXPORTER ?? "").trim().toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/** How long one export may take (OTEL_EXPORTER_OTLP_TIMEOUT when set); the flush at exit waits no longer. */
const DEFAULT_TIMEOUT_MS = 2000;

/**
 * Starts exporting spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, honouring the standard OTEL_*
 * variables (protocol, headers, timeout, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES); resolves to null (nothing loaded) otherwise.
 * Spans go out in batches in the background: an unreachable collector never
 * fails or slows a turn, its spans are dropped with one warning.
 */
export async function startTraceExport(options: TraceExportOptions = {}): Promise<TraceExport | null> {
  const env = options.env ?? process.env;
  if (!traceExportConfigured(env)) return null;
  const warn = options.warn ?? ((message: string) => process.emitWarning(message, { code: "OPENPROGRAM_OTLP" }));
  const requested = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf")
    .trim()
    .toLowerCase();
  const protocol = TRACE_EXPORT_PROTOCOLS.find((known) => known === requested);
  if (!protocol) {
    warn(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${requested} is not supported; use http/protobuf or http/json. Spans are not exported.`,
    );
    return null;
  }
  const [sdk, resources, exporterModule] = await Promise.all([
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/resources"),
    protocol === "http/json"
      ? import("@opentelemetry/exporter-trace-otlp-http")
      : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  // The exporter retries an unreachable collector until its timeout: kept short unless the user set one.
  const configuredTimeout = Number(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT);
  const timeoutMs =
    Number.isFinite(configuredTimeout) && configuredTimeout > 0 ? configuredTimeout : DEFAULT_TIMEOUT_MS;
  const otlp = new exporterModule.OTLPTraceExporter(
    Number.isFinite(configuredTimeout) && configuredTimeout > 0 ? {} : { timeoutMillis: DEFAULT_TIMEOUT_MS },
  );
  const exporter = new WarnOnceExporter(otlp, warn);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ "service.name": options.serviceName ?? "openprogram" }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.TracerProvider({ resource, spanProcessors: [new sdk.BatchSpanProcessor({ exporter })] });
  if (!trace.setGlobalTracerProvider(provider)) {
    warn("A tracer provider was already registered in this process; OTEL_EXPORTER_OTLP_* is left to it.");
    return null;
  }
  return {
    protocol,
    flush: (waitMs = timeoutMs) => bounded(provider.forceFlush(), waitMs),
    shutdown: async (waitMs = timeoutMs) => {
      await bounded(provider.shutdown(), waitMs);
      trace.disable();
    },
  };
}

/** Waits for `work` at most `timeoutMs`; never rejects (export trouble is warned about, not thrown). */
async function bounded(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([work.then(noop, noop), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function noop(): void {}

/** Passes spans on; the first failed export is said once, the rest stay quiet. */
class WarnOnceExporter implements SpanExporter {
  private warned = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly warn: (message: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== SUCCESS && !this.warned) {
        this.warned = true;
        this.warn(
          `Could not export spans to the OTLP collector (${result.error?.message ?? "export failed"}); ` +
            "spans are dropped until it answers. Check OTEL_EXPORTER_OTLP_ENDPOINT.",
        );
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

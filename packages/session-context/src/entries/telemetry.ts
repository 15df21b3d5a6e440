// @openprogram/session-context/telemetry: OpenTelemetry GenAI spans and exporting them over
// OTLP: what the CLI, the dispatcher and the process runner switch on and configure.

export { CAPTURE_CONTENT_VARIABLE, GEN_AI, parseTraceparent, traceparentOf } from "../telemetry/spans.js";
export { ERROR_MESSAGES_VARIABLE, setTraceErrorMessages, tracesErrorMessages } from "../telemetry/spans.js";
export {
  startTraceExport,
  traceExportConfigured,
  TRACE_EXPORT_PROTOCOLS,
  type TraceExport,
  type TraceExportOptions,
} from "../telemetry/trace-export.js";

import type { CommandContext, CommandResult } from "./command-context.js";
import type { CommandFunction } from "./lazy-action.js";
import { writeLine } from "./output.js";

/**
 * Wraps a command that runs turns so its spans are exported when
 * OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (the
 * OpenTelemetry SDK is loaded only then), flushed before a short run ends. A
 * server ("serving") keeps exporting in the background.
 */
export function traced<Args extends unknown[]>(
  load: () => Promise<CommandFunction<Args>>,
): () => Promise<CommandFunction<Args>> {
  return async () => {
    const run = await load();
    return async (...args: [...Args, CommandContext]): Promise<CommandResult> => {
      const { io } = args[args.length - 1] as CommandContext;
      const { startTraceExport, traceExportConfigured } = await import("@openprogram/session-context/telemetry");
      const exported = traceExportConfigured(io.env)
        ? await startTraceExport({ env: io.env, warn: (message) => writeLine(io.stderr, `warning: ${message}`) })
        : null;
      let result: CommandResult = 1;
      try {
        result = await run(...args);
        return result;
      } finally {
        if (result !== "serving") await exported?.shutdown();
      }
    };
  };
}

import { serializeError, sessionContext, TurnSuspendedError } from "@openprogram/session-context";
import { RelayedProvider, readContextCarrier } from "@openprogram/session-context/relay";
import { ModelRuntime } from "@openprogram/session-context/runtime";
import { openStore } from "@openprogram/session-context/store";
import { startTraceExport, type TraceExport } from "@openprogram/session-context/telemetry";
import type { ParentChannel } from "./parent-channel.js";
import { loadProgram } from "./load-program.js";
import { createRelayAsker } from "./relay-asker.js";
import { ParentModelPort } from "./model-port.js";

/**
 * The child's whole life: load the program, enter the parent's turn through
 * `sessionContext` (the same entry every other program uses), run the
 * function, report, exit. Never returns.
 */
export async function runChild(channel: ParentChannel): Promise<never> {
  // The child's spans join the parent's trace (carrier TRACEPARENT) and go where the parent's go (OTEL_* inherited).
  const exported = await startTraceExport();
  const controller = new AbortController();
  let reporting = false;
  const start = await channel.started;
  const asker = start.hasAsker ? createRelayAsker((message) => channel.send(message)) : null;
  const relay = start.modelRelay ?? null;
  const models = relay ? new ParentModelPort(relay.provider, (message) => channel.send(message)) : null;
  channel.onMessage((message) => {
    switch (message.type) {
      case "abort":
        controller.abort(message.suspend === true ? new TurnSuspendedError(message.reason) : message.reason);
        return;
      case "answer":
        asker?.answer(message);
        return;
      case "model_body":
      case "model_text":
      case "model_end":
        models?.handle(message);
        return;
      case "start":
        return;
    }
  });
  channel.onDisconnect(() => {
    if (reporting) return;
    // The parent is gone: cancel, give the work its grace period, then take the whole group down (no orphans).
    controller.abort("the parent process went away");
    setTimeout(() => process.kill(-process.pid, "SIGKILL"), start.graceMs).unref();
  });

  const loaded = await loadProgram(start.moduleUrl, start.exportName, start.typeScriptLoader);
  if (!loaded.ok) return finish(channel, { type: "load_error", kind: loaded.kind, message: loaded.message }, 1);

  let value: unknown;
  try {
    const carrier = readContextCarrier();
    if (!carrier)
      throw new Error(
        "The child process received no session context (OPENPROGRAM_SESSION_ID is not set); start it with runInChild().",
      );
    value = await sessionContext(
      {
        sessionId: carrier.sessionId,
        turnId: carrier.turnId,
        callerId: carrier.callerId,
        ...(carrier.sessionsRoot ? { db: openStore({ root: carrier.sessionsRoot }) } : {}),
        asker,
        // The parent records or replays: every model call goes to its provider, numbered after its own.
        ...(relay && models
          ? { runtime: new ModelRuntime(new RelayedProvider(relay, models), relay.model, relay.defaults) }
          : {}),
        signal: controller.signal,
        onEvent: (event) => void channel.send({ type: "event", event }),
        source: "process",
        traceparent: carrier.traceparent,
      },
      () => loaded.program(start.input),
    );
  } catch (error) {
    reporting = true;
    return finish(channel, { type: "error", error: serializeError(error, { stack: true }) }, 1, exported);
  }
  reporting = true;
  let sendable: string | undefined;
  try {
    sendable = JSON.stringify(value);
  } catch (error) {
    const message = `The result of ${loaded.exportName} is not JSON-serialisable (${(error as Error).message}); return plain JSON data.`;
    return finish(channel, { type: "unsendable_result", message }, 1, exported);
  }
  return finish(
    channel,
    sendable === undefined ? { type: "result" } : { type: "result", value: JSON.parse(sendable) as unknown },
    0,
    exported,
  );
}

async function finish(
  channel: ParentChannel,
  message: Parameters<ParentChannel["send"]>[0],
  exitCode: number,
  exported: TraceExport | null = null,
): Promise<never> {
  // Spans first: the parent may end the turn (and a short CLI run exit) as soon as the result arrives.
  await exported?.shutdown();
  await channel.send(message);
  process.exit(exitCode);
}

// Spans through @opentelemetry/api only: without a registered tracer provider every call here is a no-op.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
} from "@opentelemetry/api";
import type { ChatMessage, ModelRequest, ModelResponse } from "../providers/types.js";
import { PACKAGE_VERSION } from "../context/storage.js";

const TURN_WORKFLOW = "openprogram.turn";

const tracer = () => trace.getTracer("@openprogram/session-context", PACKAGE_VERSION);

/** GenAI semantic-convention attribute names (OpenTelemetry semconv, gen_ai.*). */
export const GEN_AI = {
  operation: "gen_ai.operation.name",
  provider: "gen_ai.provider.name",
  conversation: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  workflowName: "gen_ai.workflow.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cachedInputTokens: "gen_ai.usage.cache_read.input_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  systemInstructions: "gen_ai.system_instructions",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
} as const;

/** The conventions' opt-in for recording message contents (off unless set). */
export const CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

function capturesContent(): boolean {
  const value = (process.env[CAPTURE_CONTENT_VARIABLE] ?? "").trim().toLowerCase();
  return value === "true" || value === "span_only" || value === "span_and_event";
}

/**
 * The opt-in for error messages and stack traces on spans (and the dispatcher's logs). Off by default: a message may
 * quote a prompt, an answer or a path. Off, a failed span carries `error.type` (the error's code) and an
 * `exception` event with `exception.type` only.
 */
export const ERROR_MESSAGES_VARIABLE = "OPENPROGRAM_ERROR_MESSAGES";

let errorMessagesSetting: boolean | null = null;

/** Sets the policy for this process (true: record messages and stacks); null goes back to the variable. */
export function setTraceErrorMessages(include: boolean | null): void {
  errorMessagesSetting = include;
}

/** Whether failed spans record the error's message and stack (setTraceErrorMessages, else the variable). */
export function tracesErrorMessages(): boolean {
  if (errorMessagesSetting !== null) return errorMessagesSetting;
  const value = (process.env[ERROR_MESSAGES_VARIABLE] ?? "").trim().toLowerCase();
  return value === "1" || value === "true";
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a W3C `traceparent` names, or null when it is absent or malformed (ignored, as W3C says). */
export function parseTraceparent(value: string | undefined | null): SpanContext | null {
  const match = TRACEPARENT.exec((value ?? "").trim().toLowerCase());
  if (!match || match[1] === "ff") return null;
  const [, , traceId = "", spanId = "", flags = "00"] = match;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & 1, isRemote: true };
}

/** The W3C `traceparent` of the span in `parent`, or null when it has none. */
export function traceparentOf(parent: Context | undefined): string | null {
  const span = parent ? trace.getSpanContext(parent) : undefined;
  if (!span || !trace.isSpanContextValid(span)) return null;
  return `00-${span.traceId}-${span.spanId}-0${span.traceFlags & 1}`;
}

/** The context spans of a turn hang under: the caller's `traceparent` when one came with the turn, else none. */
export function parentContextOf(traceparent: string | undefined | null): Context {
  const remote = parseTraceparent(traceparent);
  return remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
}

/** A started span and the context its children hang under. */
export interface OpenSpan {
  readonly span: Span;
  readonly context: Context;
}

function open(name: string, parent: Context, kind: SpanKind, attributes: Record<string, string | number>): OpenSpan {
  const span = tracer().startSpan(name, { kind, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * The root span of one turn (`invoke_workflow openprogram.turn`): every span of
 * the turn in this process hangs under it, so a turn is one trace.
 */
export function startTurnSpan(parent: Context, fields: { sessionId: string; turnId: string }): OpenSpan {
  return open(`invoke_workflow ${TURN_WORKFLOW}`, parent, SpanKind.INTERNAL, {
    [GEN_AI.operation]: "invoke_workflow",
    [GEN_AI.workflowName]: TURN_WORKFLOW,
    [GEN_AI.conversation]: fields.sessionId,
    "openprogram.turn.id": fields.turnId,
  });
}

/** `invoke_agent <name>`: one agentic call. */
export function startAgentSpan(parent: Context, fields: { sessionId: string; name: string; nodeId: string }): OpenSpan {
  return open(`invoke_agent ${fields.name}`, parent, SpanKind.INTERNAL, {
    [GEN_AI.operation]: "invoke_agent",
    [GEN_AI.agentName]: fields.name,
    [GEN_AI.conversation]: fields.sessionId,
    "openprogram.node.id": fields.nodeId,
  });
}

/** `chat <model>`: one model request. */
export function startChatSpan(
  parent: Context,
  fields: { sessionId: string; provider: string; request: ModelRequest },
): OpenSpan {
  const { request } = fields;
  const opened = open(`chat ${request.model}`, parent, SpanKind.CLIENT, {
    [GEN_AI.operation]: "chat",
    [GEN_AI.provider]: fields.provider,
    [GEN_AI.requestModel]: request.model,
    [GEN_AI.conversation]: fields.sessionId,
    ...(request.maxTokens !== undefined ? { [GEN_AI.requestMaxTokens]: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { [GEN_AI.requestTemperature]: request.temperature } : {}),
  });
  if (opened.span.isRecording() && capturesContent()) recordInputMessages(opened.span, request.messages);
  return opened;
}

/** Ends a `chat` span with what the provider reported. */
export function endChatSpan(span: Span, response: ModelResponse): void {
  if (span.isRecording()) {
    span.setAttribute(GEN_AI.responseModel, response.model);
    const usage = response.usage;
    if (usage?.inputTokens !== undefined) span.setAttribute(GEN_AI.inputTokens, usage.inputTokens);
    if (usage?.outputTokens !== undefined) span.setAttribute(GEN_AI.outputTokens, usage.outputTokens);
    if (usage?.cachedInputTokens !== undefined) span.setAttribute(GEN_AI.cachedInputTokens, usage.cachedInputTokens);
    const finish = response.finishReason;
    if (finish) span.setAttribute(GEN_AI.finishReasons, [finish]);
    if (capturesContent()) {
      const parts = [{ type: "text", content: response.text }];
      span.setAttribute(
        GEN_AI.outputMessages,
        JSON.stringify([{ role: "assistant", parts, ...(finish ? { finish_reason: finish } : {}) }]),
      );
    }
  }
  span.end();
}

function recordInputMessages(span: Span, messages: readonly ChatMessage[]): void {
  const system = messages.filter((message) => message.role === "system");
  const rest = messages.filter((message) => message.role !== "system");
  if (system.length > 0) {
    span.setAttribute(
      GEN_AI.systemInstructions,
      JSON.stringify(system.map((message) => ({ type: "text", content: message.content }))),
    );
  }
  span.setAttribute(
    GEN_AI.inputMessages,
    JSON.stringify(
      rest.map((message) => ({ role: message.role, parts: [{ type: "text", content: message.content }] })),
    ),
  );
}

/** `execute_tool <name>`: one tool call the model asked for (an agentic function's own span hangs under it). */
export function startToolSpan(
  parent: Context,
  fields: { sessionId: string; name: string; toolCallId: string },
): OpenSpan {
  return open(`execute_tool ${fields.name}`, parent, SpanKind.INTERNAL, {
    [GEN_AI.operation]: "execute_tool",
    [GEN_AI.toolName]: fields.name,
    [GEN_AI.toolCallId]: fields.toolCallId,
    [GEN_AI.toolType]: "function",
    [GEN_AI.conversation]: fields.sessionId,
  });
}

/** `execute_tool ask_user`: one question to the human (its duration is how long they took). */
export function startAskSpan(parent: Context, fields: { sessionId: string }): OpenSpan {
  return open("execute_tool ask_user", parent, SpanKind.INTERNAL, {
    [GEN_AI.operation]: "execute_tool",
    [GEN_AI.toolName]: "ask_user",
    [GEN_AI.toolType]: "function",
    [GEN_AI.conversation]: fields.sessionId,
  });
}

/**
 * Ends a span as failed: status error, `error.type`, the exception recorded (its message and stack only
 * with tracesErrorMessages()). Cancellation is not an error.
 */
export function failSpan(span: Span, error: unknown, options: { cancelled?: boolean } = {}): void {
  if (span.isRecording()) {
    const code = (error as { code?: unknown } | null)?.code;
    const type = typeof code === "string" ? code : error instanceof Error ? error.name : "_OTHER";
    span.setAttribute("error.type", options.cancelled ? "cancelled" : type);
    // A call a budget stopped says which one (BudgetExceededError's fields).
    const { scope, dimension, limit, spent } = (error ?? {}) as Record<string, unknown>;
    if (type === "budget_exceeded" && typeof scope === "string" && typeof dimension === "string")
      span.setAttributes({
        "openprogram.budget.scope": scope,
        "openprogram.budget.dimension": dimension,
        ...(typeof limit === "number" ? { "openprogram.budget.limit": limit } : {}),
        ...(typeof spent === "number" ? { "openprogram.budget.spent": spent } : {}),
      });
    if (!options.cancelled && tracesErrorMessages()) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    } else if (!options.cancelled) {
      span.addEvent("exception", { "exception.type": type });
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

import type { ActiveContext, CallFrame } from "../context/types.js";
import { runWithContext } from "../context/storage.js";
import { askUser } from "../ask/ask-user.js";
import { CancelledError, isCancellation, serializeError } from "../errors.js";
import { mintNodeId } from "../ids.js";
import { canonicalJson } from "../json/canonical.js";
import { toRecordable } from "../json/recordable.js";
import type { ToolCall } from "../providers/types.js";
import type { SessionNode } from "../store/types.js";
import { failSpan, parentContextOf, startToolSpan } from "../telemetry/spans.js";
import type { CallStep } from "../turns/replay.js";
import type { ReplyWrite } from "./reply-write.js";
import type { OfferedTool } from "./toolset.js";

/** At most this many tool calls of one reply run at once. */
export const MAX_CONCURRENT_TOOL_CALLS = 4;
/** A call (same tool, same arguments) that failed this many times in a row is not run again in that exec. */
export const REPEATED_FAILURE_LIMIT = 3;

/** The consecutive failures of each distinct call in one exec. */
export class FailureCounts {
  private readonly counts = new Map<string, number>();

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  settle(key: string, ok: boolean): void {
    if (ok) this.counts.delete(key);
    else this.counts.set(key, this.count(key) + 1);
  }
}

/** How one reply's tool calls run. */
export interface ToolCallsRun {
  /** The llm node whose reply asked for them: every execution's `caller`. */
  llmNodeId: string;
  /** That reply's model (the approval questions hang under its node). */
  model: string;
  /** The system message of the exec (the calling function's doc). */
  doc: string;
  signal: AbortSignal;
  /** Run one at a time (`parallelToolCalls: false`). */
  serial: boolean;
  failures: FailureCounts;
  /** The reply's own record, written with the first tool's node (or flushed before any other write). */
  reply: ReplyWrite;
}

/** One call as it is about to run: what the model sent, what it is, and what the record says of it. */
interface PreparedCall {
  call: ToolCall;
  tool: OfferedTool | undefined;
  /** The arguments as parsed (the text itself when it is not JSON). */
  input: unknown;
  step: CallStep | null;
  /** A result decided without running it (an unknown tool, bad arguments, a refusal, ...). */
  refused: { code: string; message: string } | null;
  args: unknown;
}

/**
 * Runs the tool calls one reply asked for and records each as a code node
 * under that reply (`caller` = the llm node, `metadata.tool_call_id`), in
 * Python OpenProgram's shape: approvals first, in the model's order (they
 * are questions, asked one at a time), then the executions, concurrently up
 * to MAX_CONCURRENT_TOOL_CALLS. Nothing a tool does goes up the stack: an
 * unknown tool, arguments that fail the schema, a tool that throws, a refusal
 * become error results the model reads. A cancellation stops the turn.
 * Replaying a resumed turn, a finished execution is reused, never run again;
 * an interrupted one continues (an agentic function), runs again (an
 * idempotent tool), or gives a result saying its effect is unknown.
 */
export async function runToolCalls(
  context: ActiveContext,
  tools: ReadonlyMap<string, OfferedTool>,
  calls: readonly ToolCall[],
  run: ToolCallsRun,
): Promise<void> {
  try {
    const prepared: PreparedCall[] = [];
    for (const call of calls) prepared.push(await prepare(context, tools, call, run));
    const pending = [...prepared];
    const workers = Array.from(
      { length: run.serial ? 1 : Math.min(MAX_CONCURRENT_TOOL_CALLS, pending.length) },
      async () => {
        for (let next = pending.shift(); next; next = pending.shift()) await execute(context, next, run);
      },
    );
    await Promise.all(workers);
  } finally {
    // Every call reused from the record, or a failure before any node: the reply is recorded all the same.
    await run.reply.flush();
  }
  if (run.signal.aborted) throw new CancelledError(run.signal.reason);
}

/** Parses, looks the tool up, consults the record, validates and asks for approval: everything before running. */
async function prepare(
  context: ActiveContext,
  tools: ReadonlyMap<string, OfferedTool>,
  call: ToolCall,
  run: ToolCallsRun,
): Promise<PreparedCall> {
  const parsed = parseArguments(call.arguments);
  const input = parsed.ok ? parsed.value : call.arguments;
  const tool = tools.get(call.name);
  const step = context.turn.replay?.enterTool(run.llmNodeId, call.id, call.name, input) ?? null;
  const base = { call, tool, input, step, args: input };
  if (step?.kind === "reuse") return { ...base, refused: null };
  if (!tool) {
    const names = [...tools.keys()].join(", ") || "none";
    return {
      ...base,
      refused: {
        code: "unknown_tool",
        message: `There is no tool named ${JSON.stringify(call.name)}; the tools are: ${names}.`,
      },
    };
  }
  if (!parsed.ok)
    return {
      ...base,
      refused: {
        code: "invalid_tool_arguments",
        message: `The arguments are not valid JSON (${parsed.error}); send a JSON object.`,
      },
    };
  const validation = await tool.validate(input);
  if (!validation.ok)
    return {
      ...base,
      refused: {
        code: "invalid_tool_arguments",
        message: `Invalid arguments for ${call.name}: ${validation.problems.join("; ")}.`,
      },
    };
  const key = failureKey(call.name, input);
  if (run.failures.count(key) >= REPEATED_FAILURE_LIMIT)
    return {
      ...base,
      refused: {
        code: "repeated_tool_failure",
        message: `Not run: ${call.name} failed ${REPEATED_FAILURE_LIMIT} times in a row with these arguments. Change approach: other arguments, another tool, or answer without it.`,
      },
    };
  // An interrupted plain tool that may have had its effect is not run twice.
  if (step?.kind === "continue" && tool.kind === "plain" && !tool.idempotent)
    return {
      ...base,
      refused: {
        code: "tool_interrupted",
        message: `${call.name} was running when the turn was interrupted and may or may not have had its effect; it was not run again. Check before calling it again.`,
      },
    };
  if (!context.approveTools && (await tool.needsApproval(validation.value))) {
    // The question hangs under the reply's node: the reply is recorded first.
    await run.reply.flush();
    const approved = await askApproval(context, call, validation.value, run);
    if (!approved)
      return {
        ...base,
        refused: { code: "tool_refused", message: `The user did not allow ${call.name} to run with these arguments.` },
      };
  }
  return { ...base, args: validation.value, refused: null };
}

/** Asks the human under the reply's node, so the question outlives the process like any other. */
async function askApproval(context: ActiveContext, call: ToolCall, args: unknown, run: ToolCallsRun): Promise<boolean> {
  const frame: CallFrame = { id: run.llmNodeId, name: run.model, doc: run.doc };
  const answer = await runWithContext({ ...context, call: frame, toolCall: null }, () =>
    askUser(`Allow the tool ${call.name} to run with ${canonicalJson(toRecordable(args ?? {}))}?`, {
      choices: ["yes", "no"],
    }),
  );
  return answer === "yes";
}

/** Runs (or settles without running) one prepared call, recording its node, events and span. */
async function execute(context: ActiveContext, prepared: PreparedCall, run: ToolCallsRun): Promise<void> {
  const { call, tool, step } = prepared;
  if (step?.kind === "reuse") {
    run.failures.settle(failureKey(call.name, prepared.input), !isErrorNode(step.node));
    return;
  }
  const nodeId = step?.kind === "continue" && step.nodeId !== undefined ? step.nodeId : mintNodeId();
  const started = performance.now();
  const span = startToolSpan(context.trace ?? parentContextOf(null), {
    sessionId: context.sessionId,
    name: call.name,
    toolCallId: call.id,
  });
  context.emit({
    type: "tool_call",
    sessionId: context.sessionId,
    nodeId,
    llmNodeId: run.llmNodeId,
    toolCallId: call.id,
    name: call.name,
    arguments: prepared.input,
  });
  const finish = (ok: boolean, error?: string): void => {
    run.failures.settle(failureKey(call.name, prepared.input), ok);
    context.emit({
      type: "tool_result",
      sessionId: context.sessionId,
      nodeId,
      toolCallId: call.id,
      name: call.name,
      ok,
      ...(error !== undefined ? { error } : {}),
      durationSeconds: (performance.now() - started) / 1000,
    });
  };
  const resumes =
    step?.kind === "continue" ? { resumes: { turn_id: context.turn.replay?.turnId, node_id: step.node.id } } : {};

  if (prepared.refused || !tool) {
    const refused = prepared.refused ?? { code: "unknown_tool", message: `There is no tool named ${call.name}.` };
    await run.reply.append({
      id: nodeId,
      role: "code",
      name: call.name,
      input: toRecordable(prepared.input),
      output: { error: refused.message },
      caller: run.llmNodeId,
      metadata: {
        status: "failed",
        tool_call_id: call.id,
        is_error: true,
        error: { name: "ToolCallError", code: refused.code, message: refused.message },
        duration_seconds: 0,
        ...resumes,
      },
    });
    step?.slot?.fill(nodeId);
    span.span.end();
    finish(false, refused.message);
    return;
  }

  if (tool.kind === "agentic" && tool.agentic) {
    // The function records its own nodes (agentic-function.ts): the reply goes first, on its own.
    await run.reply.flush();
    const agentic = tool.agentic;
    const frame: CallFrame = { id: run.llmNodeId, name: run.model, doc: run.doc };
    let ok = true;
    let message: string | undefined;
    try {
      await runWithContext(
        // The run's signal (the exec's own, its deadline) stops the function's nested calls as it stops a plain tool.
        { ...context, signal: run.signal, call: frame, trace: span.context, toolCall: { id: call.id, step, nodeId } },
        () => agentic(prepared.args),
      );
      span.span.end();
    } catch (error) {
      ok = false;
      message = error instanceof Error ? error.message : String(error);
      failSpan(span.span, error, { cancelled: isCancellation(error) || run.signal.aborted });
    }
    finish(ok, message);
    return;
  }

  const plain = tool.plain;
  await run.reply.append(
    {
      id: nodeId,
      role: "code",
      name: call.name,
      input: toRecordable(prepared.input),
      output: null,
      caller: run.llmNodeId,
      metadata: {
        status: "running",
        tool_call_id: call.id,
        ...(tool.idempotent ? { idempotent: true } : {}),
        ...resumes,
      },
      // A tool that is not idempotent runs only once its running node is durable, name and all: a power cut while it
      // runs must not make it look never started. An idempotent one may run again, so it need not wait for the name.
    },
    // Its file waits for the result's (HeldFiles): logged, it is durable all the same.
    { deferNameSync: tool.idempotent, holdFile: true },
  );
  step?.slot?.fill(nodeId);
  const duration = () => ({ duration_seconds: (performance.now() - started) / 1000 });
  try {
    if (run.signal.aborted) throw new CancelledError(run.signal.reason);
    const result = await plain?.execute(prepared.args, { signal: run.signal, toolCallId: call.id });
    // A tool that ignored the signal has still been cancelled: the turn stops here.
    if (run.signal.aborted) throw new CancelledError(run.signal.reason);
    await context.writer.update(nodeId, {
      output: toRecordable(result === undefined ? null : result),
      metadata: { status: "completed", ...duration() },
    });
    span.span.end();
    finish(true);
  } catch (error) {
    const cancelled = run.signal.aborted || isCancellation(error);
    const failure = cancelled ? new CancelledError(run.signal.reason) : error;
    const message = failure instanceof Error ? failure.message : String(failure);
    await context.writer.update(nodeId, {
      output: { error: message },
      metadata: {
        status: cancelled ? "cancelled" : "failed",
        is_error: true,
        error: serializeError(failure),
        ...duration(),
      },
    });
    failSpan(span.span, failure, { cancelled });
    finish(false, message);
  }
}

function parseArguments(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text.trim() === "" ? "{}" : text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

function failureKey(name: string, input: unknown): string {
  return `${name}\u0000${canonicalJson(toRecordable(input ?? {}))}`;
}

function isErrorNode(node: SessionNode): boolean {
  return node.metadata.is_error === true || node.metadata.status === "failed";
}

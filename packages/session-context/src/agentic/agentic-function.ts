import { callIdOf, requireContext } from "../context/accessors.js";
import { runWithContext } from "../context/storage.js";
import type { ActiveContext } from "../context/types.js";
import { CancelledError, InvalidInputError, isCancellation, RuntimeMissingError } from "../errors.js";
import { inexactJsonPath } from "../json/exact-json.js";
import { toRecordable } from "../json/recordable.js";
import { describeValue } from "../messages/describe-value.js";
import { nowSeconds } from "../time/now-seconds.js";
import { recordedOutcome, topLevelMetadata } from "../turns/turn-record.js";
import type { Runtime } from "../runtime/types.js";
import { failSpan, parentContextOf, startAgentSpan } from "../telemetry/spans.js";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { failureRecord } from "./failure-record.js";
import { checkInputSchema, inputJsonSchema, validateInput } from "./input-schema.js";
import type { AgenticDeclaration, ExposeMode } from "./declaration.js";

export type { AgenticDeclaration, ExposeMode } from "./declaration.js";

/** The declaration of an agentic function. */
export interface AgenticFunctionSpec {
  /** Recorded as the code node's name (e.g. "design_experiments"). */
  name: string;
  /** The instructions: sent as the system message whenever the body calls runtime.exec. */
  doc: string;
  expose?: ExposeMode;
  /**
   * A Standard Schema validator of the input (zod 4, valibot, arktype): the
   * input is validated before the call records anything, and the body gets
   * the validated value. Its JSON Schema is recorded as `agentic.inputSchema`.
   */
  input?: StandardSchemaV1;
}

/** What the body of an agentic function receives besides its input. */
export interface AgenticCallContext {
  /** The session's runtime; exec throws RuntimeMissingError when no provider is configured. */
  runtime: Runtime;
  /** This call's code node id. */
  callId: string;
  sessionId: string;
  /** Aborts when the turn is cancelled. */
  signal: AbortSignal;
}

/** An agentic function: call it with one input object inside a session context. */
export interface AgenticFunction<Input, Output> {
  (input: Input): Promise<Output>;
  /** The declaration, also used to recognise agentic functions across package copies. */
  readonly agentic: Readonly<AgenticDeclaration>;
}

const AGENTIC_MARK = Symbol.for("openprogram.agentic-function");
/** Where the validator lives on the function (a registered symbol: found from any copy of this package). */
const INPUT_VALIDATOR = Symbol.for("openprogram.agentic-function.input");
const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/**
 * Declares an agentic function. Each call records a `code` node (input, doc,
 * status running), runs the body with this call as the current call (so
 * nested calls and exec record under it), then records the output and
 * duration, or the error ("failed", or "cancelled" when the turn's signal
 * aborted) and rethrows it.
 */
export function agenticFunction<Schema extends StandardSchemaV1, Output = unknown>(
  spec: AgenticFunctionSpec & { input: Schema },
  impl: (input: StandardSchemaV1.InferOutput<Schema>, call: AgenticCallContext) => Promise<Output> | Output,
): AgenticFunction<StandardSchemaV1.InferInput<Schema>, Output>;
export function agenticFunction<Input = Record<string, unknown>, Output = unknown>(
  spec: AgenticFunctionSpec,
  impl: (input: Input, call: AgenticCallContext) => Promise<Output> | Output,
): AgenticFunction<Input, Output>;
export function agenticFunction<Input = Record<string, unknown>, Output = unknown>(
  spec: AgenticFunctionSpec,
  impl: (input: Input, call: AgenticCallContext) => Promise<Output> | Output,
): AgenticFunction<Input, Output> {
  const declaration = validateSpec(spec);
  const validator = spec.input === undefined ? null : checkInputSchema(declaration.name, spec.input);
  if (typeof impl !== "function")
    throw new InvalidInputError(`agenticFunction(${declaration.name}): the implementation must be a function.`);

  const call = async (input: Input): Promise<Output> => {
    const context = requireContext(`The agentic function ${declaration.name}`);
    if (input !== undefined && (input === null || typeof input !== "object" || Array.isArray(input))) {
      throw new InvalidInputError(`${declaration.name} takes one input object, not ${describeValue(input)}.`);
    }
    // Validated before anything is recorded: a bad input leaves no node (and a new session it refused is removed).
    const value = (validator ? await validateInput(declaration.name, validator, input ?? {}) : input) as Input;
    if (context.signal.aborted) throw new CancelledError(context.signal.reason);
    const parent = callIdOf(context);
    // Run as a tool call: the tool loop decided replay by the call's id, and the node records that id.
    const toolCall = context.toolCall ?? null;
    const step = toolCall ? toolCall.step : (context.turn.replay?.enterCall(parent, declaration.name, input) ?? null);
    if (step?.kind === "reuse") return recordedOutcome(step.node) as Output;
    const continued = step?.kind === "continue" ? step.node : null;
    const node = await context.writer.append(
      {
        role: "code",
        name: declaration.name,
        input: toRecordable(input ?? {}),
        caller: parent ?? "",
        metadata: {
          expose: declaration.expose,
          status: "running",
          doc: declaration.doc,
          ...(parent === null ? topLevelMetadata(context, input) : {}),
          ...(toolCall ? { tool_call_id: toolCall.id } : {}),
          ...(continued ? { resumes: { turn_id: context.turn.replay?.turnId, node_id: continued.id } } : {}),
        },
        ...(step?.kind === "continue" && step.nodeId !== undefined
          ? { id: step.nodeId }
          : toolCall
            ? { id: toolCall.nodeId }
            : {}),
      },
      // Not waited to be durable: a power cut that loses it runs the call again (see AppendOptions.deferNameSync).
      parent === null ? { atHead: true, rootMarker: "ROOT", deferNameSync: true } : { deferNameSync: true },
    );
    step?.slot?.fill(node.id);
    if (continued) context.turn.replay?.openFrame(node.id, continued);
    const started = performance.now();
    const span = startAgentSpan(context.trace ?? parentContextOf(null), {
      sessionId: context.sessionId,
      name: declaration.name,
      nodeId: node.id,
    });
    const inner: ActiveContext = Object.freeze({
      ...context,
      call: { id: node.id, name: declaration.name, doc: declaration.doc },
      trace: span.context,
      toolCall: null,
    });
    const finished = (): Record<string, unknown> => ({
      duration_seconds: (performance.now() - started) / 1000,
      finished_at: nowSeconds(),
    });
    let result: Output;
    try {
      // A stop that landed while the node was being written: a body that never checks the signal would run on.
      if (context.signal.aborted) throw new CancelledError(context.signal.reason);
      result = await runWithContext(inner, () =>
        impl(value ?? ({} as Input), {
          runtime: context.runtime ?? missingRuntime,
          callId: node.id,
          sessionId: context.sessionId,
          signal: context.signal,
        }),
      );
    } catch (error) {
      const cancelled = isCancellation(error) || context.signal.aborted;
      failSpan(span.span, error, { cancelled });
      // The output is Python's `{"error": ...}`: as a tool call's result, the model reads it too.
      const failure = failureRecord(error, cancelled);
      await context.writer.update(node.id, {
        ...failure,
        metadata: { ...failure.metadata, ...(toolCall ? { is_error: true } : {}), ...finished() },
      });
      throw error;
    }
    await context.writer.update(
      node.id,
      {
        output: toRecordable(result),
        // Replay returns recorded results in place of live ones, so it must know which were recorded inexactly.
        metadata: { status: "completed", ...finished(), ...exactness(result) },
      },
      // A tool's result is durable before the model reads it; a call's own result waits for the next durable write.
      { deferNameSync: toolCall === null },
    );
    span.span.end();
    return result;
  };

  Object.defineProperty(call, "name", { value: declaration.name });
  Object.defineProperty(call, "agentic", { value: Object.freeze(declaration), enumerable: true });
  Object.defineProperty(call, AGENTIC_MARK, { value: true });
  if (validator) Object.defineProperty(call, INPUT_VALIDATOR, { value: validator });
  return call as AgenticFunction<Input, Output>;
}

/** Marks a result the node cannot hold exactly (replay then runs the call again instead of returning it). */
function exactness(result: unknown): Record<string, boolean> {
  if (result === undefined) return { output_undefined: true };
  return inexactJsonPath(result, "output") === null ? {} : { output_exact: false };
}

/** True for functions made by `agenticFunction` (from any copy of this package). */
export function isAgenticFunction(value: unknown): value is AgenticFunction<unknown, unknown> {
  return typeof value === "function" && (value as unknown as Record<symbol, unknown>)[AGENTIC_MARK] === true;
}

/** Stands in when no provider is configured, so the failure names the fix. */
const missingRuntime: Runtime = Object.freeze({
  provider: Object.freeze({
    name: "none",
    complete: () => Promise.reject(new RuntimeMissingError()),
  }),
  model: "none",
  exec: () => Promise.reject(new RuntimeMissingError()),
  chat: () => Promise.reject(new RuntimeMissingError()),
});

/**
 * Validates `input` against the function's schema, as the call would, without
 * running it: entries check a run's input before they create a session.
 * Resolves to the validated value (the input itself when there is no schema).
 */
export async function validateAgenticInput<Input>(fn: AgenticFunction<Input, unknown>, input: unknown): Promise<Input> {
  const validator = (fn as unknown as Record<symbol, StandardSchemaV1 | undefined>)[INPUT_VALIDATOR];
  return (validator ? await validateInput(fn.agentic.name, validator, input ?? {}) : input) as Input;
}

function validateSpec(spec: AgenticFunctionSpec): AgenticDeclaration {
  if (!spec || typeof spec !== "object")
    throw new InvalidInputError("agenticFunction(spec, impl): spec must be { name, doc }.");
  if (typeof spec.name !== "string" || !NAME_PATTERN.test(spec.name)) {
    throw new InvalidInputError(
      `agenticFunction: name ${JSON.stringify(spec.name)} must start with a letter or '_' and use letters, digits, '_', '.' or '-'.`,
    );
  }
  if (typeof spec.doc !== "string")
    throw new InvalidInputError(`agenticFunction(${spec.name}): doc must be a string: the function's instructions.`);
  const expose = spec.expose ?? "io";
  if (expose !== "io" && expose !== "output" && expose !== "hidden") {
    throw new InvalidInputError(`agenticFunction(${spec.name}): expose must be "io", "output" or "hidden".`);
  }
  const inputSchema = spec.input === undefined ? null : inputJsonSchema(checkInputSchema(spec.name, spec.input));
  return { name: spec.name, doc: spec.doc, expose, inputSchema };
}

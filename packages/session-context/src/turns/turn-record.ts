import type { ActiveContext } from "../context/types.js";
import { deserializeError, type SerializedError } from "../errors.js";
import { inexactJsonPath } from "../json/exact-json.js";
import type { SessionNode } from "../store/types.js";
import { traceparentOf } from "../telemetry/spans.js";

/**
 * The metadata of a top-level call: the turn it belongs to, and on the
 * turn's first top-level call what resuming the turn needs (`resumable`: the
 * program as the entry names it, its input, the runtime's provider and
 * model, and the turn's trace when tracing is on, so a resumed turn can link
 * to it). Python OpenProgram reads these as extra metadata keys.
 */
export function topLevelMetadata(context: ActiveContext, input: unknown): Record<string, unknown> {
  const { turn, runtime } = context;
  if (turn.recordedResumable) return { turn_id: turn.turnId };
  turn.recordedResumable = true;
  const program = turn.program;
  const programInput = program && "input" in program ? program.input : (input ?? {});
  const problem = inexactJsonPath(programInput, "input");
  const traceparent = traceparentOf(context.trace);
  return {
    turn_id: turn.turnId,
    resumable: {
      program: program?.ref ?? null,
      ...(problem === null
        ? { input: programInput }
        : { input_problem: `${problem}, which cannot be recorded exactly` }),
      provider: runtime?.provider.name ?? null,
      model: runtime?.model ?? null,
    },
    ...(traceparent ? { traceparent } : {}),
  };
}

/** The outcome a finished call recorded: its output, or its error thrown again. */
export function recordedOutcome(node: SessionNode): unknown {
  if (node.metadata.status === "failed") {
    const error = node.metadata.error as Partial<SerializedError> | undefined;
    throw deserializeError({
      name: typeof error?.name === "string" ? error.name : "Error",
      code: typeof error?.code === "string" ? error.code : "error",
      message: typeof error?.message === "string" ? error.message : "",
    });
  }
  // A copy: the recorded node is shared with the store's cache, and the program may change what it gets.
  return node.metadata.output_undefined === true ? undefined : structuredClone(node.output);
}

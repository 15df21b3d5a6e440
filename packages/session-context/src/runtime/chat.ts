import { callIdOf, requireContext } from "../context/accessors.js";
import { InvalidInputError, RuntimeMissingError } from "../errors.js";
import { renderPrompt } from "./render-prompt.js";
import { ModelRuntime, sessionNodes } from "./model-runtime.js";
import type { ExecOptions } from "./types.js";

/** Options of a chat turn. */
export interface ChatOptions extends ExecOptions {
  /** A system message for the conversation (none by default). */
  system?: string;
}

/**
 * One chat turn in the current session: records the user's message on the
 * conversation branch, sends the branch to the model and records the reply.
 * The CLI's `chat` and the dispatcher's `chat` frame both call this, so a
 * conversation continues identically from either.
 */
export async function chat(text: string, options: ChatOptions = {}): Promise<string> {
  const context = requireContext("chat()");
  if (typeof text !== "string" || text.trim() === "")
    throw new InvalidInputError("chat(text): text must be a non-empty string.");
  if (callIdOf(context) !== null)
    throw new InvalidInputError(
      "chat() starts a conversation turn and cannot run inside an agentic function; use runtime.exec there.",
    );
  const runtime = context.runtime;
  if (!runtime) throw new RuntimeMissingError();
  if (!(runtime instanceof ModelRuntime))
    throw new InvalidInputError("chat() needs a runtime made by createRuntime().");
  const user = await context.writer.append(
    { role: "user", output: text, caller: "" },
    { atHead: true, rootMarker: null },
  );
  const { nodes, ordered } = sessionNodes(context);
  const system = options.system ?? null;
  const prompt = renderPrompt({ nodes, ordered, callId: null, headId: user.id, system, content: null });
  return runtime.send(context, { prompt, system, content: null, kind: "chat" }, null, options);
}

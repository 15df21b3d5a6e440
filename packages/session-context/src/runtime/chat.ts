import { callIdOf, requireContext } from "../context/accessors.js";
import type { ActiveContext } from "../context/types.js";
import { InvalidInputError, RuntimeMissingError } from "../errors.js";
import type { ChatOptions } from "./types.js";

export type { ChatOptions } from "./types.js";

/**
 * One chat turn in the current session: records the user's message on the
 * conversation branch, sends the branch to the model and records the reply,
 * through the context's runtime (`runtime.chat`). The CLI's `chat` and the
 * dispatcher's `chat` frame both call this, so a conversation continues
 * identically from either.
 */
export async function chat(text: string, options: ChatOptions = {}): Promise<string> {
  const context = chatTurnContext(text, "chat()");
  if (!context.runtime) throw new RuntimeMissingError();
  return context.runtime.chat(text, options);
}

/** The context a chat turn runs in, after checking `text` and that it runs at the top level. */
export function chatTurnContext(text: string, entry: string): ActiveContext {
  const context = requireContext(entry);
  if (typeof text !== "string" || text.trim() === "")
    throw new InvalidInputError(`${entry.replace("()", "(text)")}: text must be a non-empty string.`);
  if (callIdOf(context) !== null)
    throw new InvalidInputError(
      `${entry} starts a conversation turn and cannot run inside an agentic function; use runtime.exec there.`,
    );
  return context;
}

// A session's title is set once, when the session is created, from what
// started it; it never follows later messages (the `preview` does that). As in
// Python OpenProgram: a chat is titled by the first line of its first message
// (50 characters), a program run by its call, `name(key=value, ...)` (80).
import { clipText } from "../messages/clip-text.js";

/** Longest title taken from a message (Python's first-turn truncation). */
export const MESSAGE_TITLE_CHARS = 50;
/** Longest title of a program run (Python's title limit). */
export const PROGRAM_TITLE_CHARS = 80;
/** Longest value shown for one argument of a program run's title. */
const ARGUMENT_CHARS = 40;

/** The title of a session a chat message starts: its first non-blank line, clipped. */
export function titleFromMessage(text: string): string {
  const line = text.split("\n").find((candidate) => candidate.trim() !== "") ?? "";
  return clipText(line.trim(), MESSAGE_TITLE_CHARS);
}

/** The title of a session a program run starts: `name(key=value, ...)`, each value as JSON, clipped. */
export function titleFromProgram(name: string, input: unknown): string {
  const entries =
    input !== null && typeof input === "object" && !Array.isArray(input)
      ? Object.entries(input as Record<string, unknown>).map(([key, value]) => `${key}=${argument(value)}`)
      : input === undefined
        ? []
        : [argument(input)];
  return clipText(`${name}(${entries.join(", ")})`, PROGRAM_TITLE_CHARS);
}

function argument(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return clipText(text.replace(/\s+/g, " "), ARGUMENT_CHARS);
}

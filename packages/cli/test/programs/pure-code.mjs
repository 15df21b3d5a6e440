// Calls no model: runs fine with no provider configured.
import { agenticFunction, currentSession } from "@openprogram/session-context";

export default agenticFunction({ name: "count_words", doc: "Count the words of the text." }, async ({ text }) => ({
  words: String(text ?? "")
    .split(/\s+/)
    .filter(Boolean).length,
  source: currentSession().source,
}));

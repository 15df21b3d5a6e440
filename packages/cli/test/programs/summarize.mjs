// A user program as a user would write it: the instructions live in the doc.
import { agenticFunction } from "@openprogram/session-context";

export const SUMMARIZE_DOC = "Summarize the text in one sentence of plain English. Never add facts.";

export const summarize = agenticFunction({ name: "summarize", doc: SUMMARIZE_DOC }, async ({ text }, { runtime }) =>
  runtime.exec(`Text: ${text}`),
);

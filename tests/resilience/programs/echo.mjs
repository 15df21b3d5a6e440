// The smallest program: records one call and returns its text. No model needed.
import { agenticFunction } from "@openprogram/session-context";

export const echo = agenticFunction(
  { name: "echo", doc: "Return the text you are given." },
  async ({ text }) => text ?? "",
);

// One agentic export, a default export that is not agentic, and a plain helper:
// without #export, the only agentic export runs (in-process and with --isolate alike).
import { agenticFunction } from "@openprogram/session-context";

export default { note: "configuration, not a program" };
export const onlyOne = agenticFunction(
  { name: "picked_only", doc: "Say which export ran." },
  async () => "picked_only",
);
export const helper = (value) => value;

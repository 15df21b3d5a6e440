// An agentic default export beside another agentic export: without #export, the default runs.
import { agenticFunction } from "@openprogram/session-context";

export default agenticFunction({ name: "picked_default", doc: "Say which export ran." }, async () => "picked_default");
export const other = agenticFunction(
  { name: "picked_other", doc: "Say which export ran." },
  async () => "picked_other",
);

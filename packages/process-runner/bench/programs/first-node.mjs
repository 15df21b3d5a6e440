// The smallest agentic function: one code node, no model call.
import { agenticFunction } from "@openprogram/session-context";

export default agenticFunction({ name: "first_node", doc: "Return at once." }, async () => "done");

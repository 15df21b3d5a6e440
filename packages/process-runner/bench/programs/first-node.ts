// The smallest agentic function, in TypeScript: the child loads it through tsx.
import { agenticFunction } from "@openprogram/session-context";

export default agenticFunction({ name: "first_node", doc: "Return at once." }, async (): Promise<string> => "done");

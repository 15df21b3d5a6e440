// A JavaScript program (no TypeScript loader in the child).
import { agenticFunction } from "@openprogram/session-context";

/** Echoes its input, recorded as one code node. */
export default agenticFunction({ name: "echo", doc: "Echo the input." }, async (input) => ({ echoed: input }));

// A program that offers the model no tools of its own: `run --mcp <server>` gives them for the turn.
import { agenticFunction } from "@openprogram/session-context";

export const keepNotes = agenticFunction(
  { name: "keep_notes", doc: "Keep the notes the user asks for." },
  async (_input, { runtime }) => runtime.exec("Note milk, then add 2 and 3."),
);

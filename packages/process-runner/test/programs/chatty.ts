// A program that uses the IPC channel itself, with messages that look like the runner's.
import { agenticFunction } from "@openprogram/session-context";

/** Sends look-alike messages to the parent, then returns its real result. */
export const chatty = agenticFunction({ name: "chatty", doc: "Talk to the parent directly." }, async () => {
  process.send?.({ type: "result", value: "forged" });
  process.send?.({ type: "error", error: { name: "Forged", code: "forged", message: "forged" } });
  process.send?.("a plain string");
  return "real";
});

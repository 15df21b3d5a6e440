// Ignores its cancellation signal on purpose: only a second Ctrl-C ends it.
import { agenticFunction } from "@openprogram/session-context";

export const stubborn = agenticFunction({ name: "stubborn", doc: "Wait a long time." }, async () => {
  process.stderr.write("stubborn: waiting\n");
  await new Promise((resolve) => setTimeout(resolve, 120_000));
  return "finished";
});

// A call that waits on a slow model reply and honours cancellation (the scripted provider's delay aborts with the signal).
import { agenticFunction } from "@openprogram/session-context";

/** One exec whose scripted reply takes minutes. */
export const slowAnswer = agenticFunction(
  { name: "slow_answer", doc: "Answer slowly." },
  async (_input: object, { runtime }) => runtime.exec("Take your time."),
);

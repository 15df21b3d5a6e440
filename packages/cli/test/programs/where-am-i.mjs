// Reports the process it ran in, and asks a question, so --isolate can be told apart and its relay checked.
import { agenticFunction, askUser, currentSession } from "@openprogram/session-context";

export const whereAmI = agenticFunction({ name: "where_am_i", doc: "Report the process." }, async ({ ask }) => ({
  pid: process.pid,
  ppid: process.ppid,
  session: currentSession().sessionId,
  answer: ask ? await askUser("Proceed?", { choices: ["yes", "no"] }) : null,
}));

// A child process that joins its parent's turn through the environment carrier alone.
import { agenticFunction, currentCallId, sessionContext } from "../../src/index.js";

const childWork = agenticFunction(
  { name: "child_work", doc: "Work done in a child process." },
  async ({ n }: { n: number }) => ({ n, caller: currentCallId() }),
);
const result = await sessionContext({ runtime: null, source: "process" }, async (session) => ({
  session: session.sessionId,
  created: session.created,
  out: await childWork({ n: 7 }),
}));
process.stdout.write(`${JSON.stringify(result)}\n`);

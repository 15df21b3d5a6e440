// The parent process of the orphan test: runs the stubborn program in a child, prints the pids once the
// grandchild runs, then waits to be killed. Usage: parent-that-dies.ts <sessions root> <program>
import { agenticFunction, sessionContext } from "@openprogram/session-context";
import { openStore } from "@openprogram/session-context/store";
import { runInChild } from "../../src/index.js";

const [root, program] = process.argv.slice(2) as [string, string];
let childPid: number | undefined;
const host = agenticFunction({ name: "host", doc: "Run the stubborn program." }, async () => {
  const run = runInChild({ module: program, export: "stubborn", input: {}, graceMs: 300 });
  childPid = run.pid;
  return run.result;
});
await sessionContext(
  {
    db: openStore({ root }),
    runtime: null,
    source: "test",
    onEvent: (event) => {
      if (event.type !== "node" || event.op !== "update" || event.node.name !== "start_grandchild") return;
      const { pid } = event.node.output as { pid: number };
      process.stdout.write(`${JSON.stringify({ sessionId: event.sessionId, child: childPid, grandchild: pid })}\n`);
    },
  },
  () => host({}),
);

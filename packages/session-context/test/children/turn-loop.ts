// Child process for the commit kill test: runs 4-node turns in one session until it is killed, printing each
// acknowledged node id (a node is acknowledged once appendNode resolved).
import { SessionDB } from "../../src/entries/store.js";

const [root, sessionId] = process.argv.slice(2) as [string, string];
const db = new SessionDB({ root });
await db.openSession(sessionId);
for (let turn = 0; ; turn++) {
  const turnId = `turn_${process.pid}_${turn}`;
  await db.beginTurn(sessionId, turnId);
  for (let index = 0; index < 4; index++) {
    const node = await db.appendNode(
      sessionId,
      { role: index % 2 ? "llm" : "user", output: `t${turn}` },
      { atHead: true },
    );
    process.stdout.write(`${node.id}\n`);
  }
  await db.endTurn(sessionId, turnId, { status: "idle" });
}

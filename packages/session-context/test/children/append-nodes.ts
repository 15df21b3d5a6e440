// Child process for the store's cross-process test: appends N nodes to one session.
import { SessionDB } from "../../src/entries/store.js";

const [root, sessionId, countText, label] = process.argv.slice(2) as [string, string, string, string];
const db = new SessionDB({ root });
for (let index = 0; index < Number(countText); index++) {
  await db.appendNode(sessionId, {
    role: "code",
    name: `${label}_${index}`,
    caller: "parent",
    metadata: { status: "completed" },
  });
}
process.stdout.write("done\n");

// Child process for the spare-files tests: begins a turn, waits until the session's spare files are made, prints
// their names and exits (process.exit, the turn never ended). The exit hook must remove them.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../src/entries/store.js";
import { SPARE_STOCK } from "../../src/store/spare-files.js";

const [root, sessionId] = process.argv.slice(2) as [string, string];
const db = new SessionDB({ root });
await db.createSession({ id: sessionId, title: "exits mid-turn" });
await db.beginTurn(sessionId, "turn_left");
const spare = join(root, sessionId, ".state", "spare");
for (let wait = 0; readdirSync(spare).length < SPARE_STOCK; wait++) {
  if (wait > 500) throw new Error("the spares were never made");
  await new Promise((resolve) => setTimeout(resolve, 10));
}
process.stdout.write(`${JSON.stringify(readdirSync(spare))}\n`);
process.exit(0);

// Child process for the registry tests: creates a session, runs turns, and is killed with SIGKILL at a chosen point:
// "after-end" (a turn ended, its registry change still queued), "mid-turn" (a running node on disk, status queued).
import { SessionDB } from "../../src/entries/store.js";

const [root, sessionId, point] = process.argv.slice(2) as [string, string, string];
const db = new SessionDB({ root });
await db.createSession({ id: sessionId, title: "killed" });
await db.beginTurn(sessionId, "turn_first");
await db.appendNode(sessionId, { role: "user", output: "hello" }, { atHead: true });
await db.endTurn(sessionId, "turn_first", { status: "idle" });
if (point === "mid-turn") {
  await db.beginTurn(sessionId, "turn_second");
  await db.appendNode(sessionId, { role: "code", name: "work", metadata: { status: "running" } }, { atHead: true });
}
process.kill(process.pid, "SIGKILL");

// Child process for held-files.test.ts: another process that reads a session (prints its nodes' names and
// statuses as JSON) or appends a node to it, while the parent holds a node file in its log.
import { SessionDB } from "../../src/entries/store.js";

const [root, sessionId, mode] = process.argv.slice(2) as [string, string, "read" | "append"];
const db = new SessionDB({ root });
if (mode === "append") await db.appendNode(sessionId, { role: "user", output: "from another process" });
const nodes = await db.loadNodes(sessionId);
process.stdout.write(`${JSON.stringify(nodes.map((node) => [node.name, node.metadata.status ?? null]))}\n`);

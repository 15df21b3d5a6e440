// Child process for the doctor's test of root temp files: writes index.json (a registry flush) and the usage
// cache through the store's own writers, and stops each one between its temp file and the rename (the rename
// never returns), so the parent's SIGKILL leaves exactly what a process killed at that moment leaves.
import { syncBuiltinESMExports } from "node:module";
import fsp from "node:fs/promises";
import { dirname } from "node:path";

const [root] = process.argv.slice(2) as [string];
const realRename = fsp.rename;
let stuck = 0;
fsp.rename = async (from: Parameters<typeof realRename>[0], to: Parameters<typeof realRename>[1]) => {
  if (dirname(String(from)) === root && /\.tmp-[0-9a-f]+$/.test(String(from))) {
    stuck++;
    if (stuck === 2) process.stdout.write("stuck\n");
    return new Promise<void>(() => undefined);
  }
  return realRename(from, to);
};
// The store imports `rename` from node:fs/promises by name: this makes those bindings see the change.
syncBuiltinESMExports();

const { SessionDB } = await import("../../src/entries/store.js");
const { writeUsageCache } = await import("../../src/store/usage-cache.js");
const db = new SessionDB({ root });
await db.createSession({ id: "s", title: "before the kill" });
void db.flushRegistry();
void writeUsageCache(root, new Map());
setInterval(() => undefined, 1_000);

// A sessions root of N sessions in Python OpenProgram's layout, written
// straight to disk (creating them one by one would rewrite index.json N
// times): meta.json and one history file each, one index.json. A tenth are
// empty shells over an hour old, a third are archived (half of those past 90
// days), the rest ordinary, all older than an hour, so prune asks every one's
// history/; with the capacity rule (1,000) it names the remaining archived ones too.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const DAY = 86_400;

/** Writes the store under `root`; returns how many sessions prune's rules name (with Python's capacity, 1,000). */
export function seedPruneStore(root: string, count: number, now = Date.now() / 1000): number {
  mkdirSync(root, { recursive: true });
  const index: Record<string, Record<string, unknown>> = {};
  let named = 0;
  let archivedKept = 0;
  for (let number = 0; number < count; number++) {
    const id = `session_${number.toString(16).padStart(10, "0")}`;
    const empty = number % 10 === 0;
    const archived = !empty && number % 3 === 0;
    const expired = archived && number % 2 === 0;
    const age = expired ? 120 * DAY : (1 + (number % 60)) * DAY;
    const time = now - age;
    if (empty || expired) named++;
    else if (archived) archivedKept++;
    const dir = join(root, id);
    mkdirSync(join(dir, "history"), { recursive: true });
    const meta = { id, agent_id: "main", title: `bench ${number}`, source: "cli", created_at: time, updated_at: time };
    writeFileSync(
      join(dir, "meta.json"),
      JSON.stringify({ ...meta, project_id: "default", head_id: empty ? null : "u0" }),
    );
    if (!empty) {
      const node = { id: "u0", created_at: time, seq: 0, role: "user", name: "", input: null, output: "hello" };
      writeFileSync(
        join(dir, "history", "0000-u-u0.json"),
        JSON.stringify({ ...node, caller: "", predecessor: null, reads: [], metadata: {} }),
      );
    }
    index[id] = { ...meta, status: "idle", pinned: false, archived, unread: false, preview: "hello" };
  }
  writeFileSync(join(root, "index.json"), JSON.stringify(index, null, 2));
  return named + Math.min(archivedKept, Math.max(0, count - named - 1000));
}

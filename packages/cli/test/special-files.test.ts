// Issue 30, item 6, through the binary: a FIFO, socket or device file where the store keeps a regular file (meta.json,
// a node file, usage.json, the journal, a turn lease, .git files) blocks nothing: `sessions show`, `doctor`, `list`,
// `prune` and `usage` each answer promptly, and what cannot be read is named as the kind of file it is.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plantSpecialFile, specialFileKinds, type SpecialFileKind } from "@openprogram/session-context/testing";
import { createCliHome, runCli, type CliHome } from "./helpers/cli.js";

let home: CliHome;
beforeAll(() => {
  home = createCliHome();
});
afterAll(async () => {
  await home.cleanup();
});

/** A session with one turn of two nodes, committed. */
async function makeSession(id: string): Promise<string> {
  await home.db.createSession({ id });
  await home.db.beginTurn(id, "turn_1");
  await home.db.appendNode(id, { role: "user", output: "hello" }, { atHead: true });
  await home.db.appendNode(id, { role: "llm", output: "hi" }, { atHead: true });
  await home.db.endTurn(id, "turn_1", { status: "idle" });
  // The registry follows a create shortly (registry.ts): the commands below look the session up there, and with
  // meta.json replaced by a special file they cannot add it back from the folder.
  await home.db.flushRegistry();
  return join(home.root, id);
}

const POSITIONS: Array<[string, (dir: string) => string]> = [
  ["meta.json", (dir) => join(dir, "meta.json")],
  ["a node file", (dir) => join(dir, "history", readdirSync(join(dir, "history")).sort()[0] as string)],
  ["usage.json", (dir) => join(dir, "usage.json")],
  [".state/journal", (dir) => join(dir, ".state", "journal")],
  [".state/turns/<id>.lease", (dir) => join(dir, ".state", "turns", "turn_9.lease")],
  [".git/HEAD", (dir) => join(dir, ".git", "HEAD")],
  [".git/index", (dir) => join(dir, ".git", "index")],
  [".git/config", (dir) => join(dir, ".git", "config")],
];

const CASES: Array<[string, SpecialFileKind]> = POSITIONS.flatMap(([name], index) => {
  const kinds = specialFileKinds();
  // Every kind where the readers look first (meta.json, node files); the others take the kinds in turn.
  return index < 2
    ? kinds.map((kind): [string, SpecialFileKind] => [name, kind])
    : [[name, kinds[index % kinds.length] as SpecialFileKind]];
});

describe("a special file where the store keeps a regular file", () => {
  let count = 0;
  it.each(CASES)(
    "%s as a %s: show, doctor, list, prune and usage answer",
    async (name, kind) => {
      const id = `special_${++count}`;
      const dir = await makeSession(id);
      const locate = POSITIONS.find(([position]) => position === name)?.[1] as (dir: string) => string;
      const path = locate(dir);
      plantSpecialFile(path, kind);
      const options = { env: home.env(), timeoutMs: 30_000 };
      const [show, doctor, list, prune, usage] = await Promise.all([
        runCli(["sessions", "show", id], options),
        runCli(["sessions", "doctor", id, "--json"], options),
        runCli(["sessions", "list"], options),
        runCli(["sessions", "prune", "--dry-run"], options),
        runCli(["sessions", "usage"], options),
      ]);
      // Each answered (runCli rejects a run that does not exit in time) and none crashed.
      for (const result of [show, doctor, list, prune, usage]) {
        expect(result.signal).toBeNull();
        expect(result.stderr).not.toMatch(/RangeError|TypeError|internal_error/);
      }
      expect(list.code, list.stderr).toBe(0);
      expect(prune.code, prune.stderr).toBe(0);
      expect(usage.code, usage.stderr).toBe(0);
      const report = JSON.parse(doctor.stdout) as { findings: Array<{ kind: string; path?: string; message: string }> };
      const named = report.findings.filter((finding) => finding.path === path || finding.message.includes(path));
      if (name.startsWith(".state/") || name === ".git/index") {
        // Files the doctor does not check by name: the store refuses them when a write needs them.
        expect(doctor.code).toBeLessThanOrEqual(1);
      } else {
        expect(named.length, doctor.stdout).toBeGreaterThan(0);
      }
      if (name === "meta.json") {
        expect(show.code).not.toBe(0);
        expect(show.stderr).toMatch(/FIFO|socket|character device/);
        // The doctor refuses such a session rather than rewriting it: the advice is to remove the file first.
        expect(show.stderr).toContain("Neither store writes such a file: remove it, then run");
      }
    },
    90_000,
  );
});

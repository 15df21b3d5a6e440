// Issue 30, item 9: the doctor checks the repository's objects (git fsck, pinned), so a session whose older pack
// is truncated is reported instead of "no problems found" while `sessions log` fails.
import { chmodSync, readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctorSessions } from "../src/entries/store.js";
import { forgetRepository } from "../src/store/git/in-process-commit.js";
import { listPacks } from "../src/store/git/pack-merge.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { chatTurn } from "./helpers.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-doctor-objects-");
});
afterEach(() => store.cleanup());

describe("the doctor's object check", () => {
  it("reports a truncated older pack as git_damaged, and finds nothing in a whole repository", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    for (let turn = 0; turn < 3; turn++) await chatTurn(store.db, "s", `turn_${turn}`);
    const clean = await doctorSessions({ db: store.db, sessionId: "s" });
    expect(clean.findings).toEqual([]);

    const gitDir = join(store.root, "s", ".git");
    // The smallest pack holds the "session init" commit: git status still reads fine, git log does not.
    const target = listPacks(gitDir).sort((a, b) => a.objects - b.objects)[0];
    const path = join(gitDir, "objects", "pack", `${target!.name}.pack`);
    chmodSync(path, 0o600);
    truncateSync(path, readFileSync(path).length - 40);
    forgetRepository(gitDir);

    const report = await doctorSessions({ db: store.db, sessionId: "s" });
    const damaged = report.findings.filter((finding) => finding.kind === "git_damaged");
    expect(damaged, JSON.stringify(report.findings)).toHaveLength(1);
    expect(damaged[0]?.message).toContain("git fsck");
    expect(report.healthy).toBe(false);
    await expect(store.db.gitLog("s")).rejects.toMatchObject({ code: "git_failed" });
  });
});

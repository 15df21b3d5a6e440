// Issue 30, item 1: a session's `.git` is someone else's. No git command of ours and no in-process commit may run
// a hook or a program its config names. Each variant plants programs that only leave a marker file.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctorSessions, gcSessions } from "../src/entries/store.js";
import { configKeys } from "../src/store/git/git-config-check.js";
import { runGit } from "../src/store/git/pinned-git.js";
import { SessionPaths } from "../src/store/layout.js";
import {
  createTempStore,
  HOSTILE_GIT_VARIANTS,
  markersLeft,
  plantHostileGit,
  plantsConfig,
  type HostileGitVariant,
  type TempStore,
} from "../src/testing/index.js";
import { chatTurn, plainGit } from "./helpers.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-git-safety-");
});
afterEach(() => store.cleanup());

async function plantedSession(variant: HostileGitVariant): Promise<{ dir: string; markers: string }> {
  await store.db.createSession({ id: variant });
  await chatTurn(store.db, variant, "turn_0");
  const dir = join(store.root, variant);
  const markers = join(store.home, `markers-${variant}`);
  plantHostileGit(dir, variant, markers);
  return { dir, markers };
}

describe("the pinned settings of every git command", () => {
  // Filters, textconv and includes need config keys the allowlist refuses before git runs (tested below); these are
  // the variants git would obey from a config the pins override.
  const pinned: HostileGitVariant[] = ["hooks", "hooks_path", "fsmonitor", "pager", "diff_external", "signing"];
  it.each(pinned)("%s: nothing runs, whatever git command the store could give", async (variant) => {
    const { dir, markers } = await plantedSession(variant);
    const paths = new SessionPaths(store.root, variant);
    writeFileSync(join(dir, "extra.txt"), "changed\n");
    await runGit(paths, ["status", "--porcelain", "--untracked-files=all"]);
    await runGit(paths, ["add", "-A", "--verbose"]);
    await runGit(paths, ["commit", "--quiet", "-m", "by git"]);
    await runGit(paths, ["log", "-z", "--format=%H%x00%s", "-p", "--no-ext-diff"]);
    await runGit(paths, ["diff", "--no-ext-diff", "HEAD~1", "HEAD"]);
    await runGit(paths, ["gc", "--quiet"]);
    expect(markersLeft(markers)).toEqual([]);
    // The commit was made and is unsigned, so the settings did not stop git, only what it would have run.
    expect(plainGit(dir, "log", "-1", "--format=%s%G?")).toBe("by gitN");
  });
});

describe("a session repository with hooks or executing config", () => {
  it.each(HOSTILE_GIT_VARIANTS)("%s: turns, doctor, --fix, gc and log run nothing", async (variant) => {
    const { markers } = await plantedSession(variant);
    const before = (await store.db.gitLog(variant).catch(() => [])).length;
    const committed = await chatTurn(store.db, variant, "turn_1").then(
      () => null,
      (error: Error & { code?: string }) => error,
    );
    const doctor = await doctorSessions({ db: store.db, sessionId: variant });
    await doctorSessions({ db: store.db, sessionId: variant, fix: true });
    const gc = await gcSessions({ db: store.db, sessionId: variant });
    const log = await store.db.gitLog(variant).then(
      (entries) => entries,
      (error: Error & { code?: string }) => error,
    );
    expect(markersLeft(markers)).toEqual([]);
    const kinds = doctor.findings.map((finding) => finding.kind);
    if (plantsConfig(variant)) {
      expect(kinds).toContain("unsafe_git_config");
      expect(gc.sessions[0]?.skipped).toBe("unsafe_git_config");
      expect((log as { code?: string }).code).toBe("unsafe_git_config");
    } else {
      // Hooks are not obeyed, and not a reason to hand the commit to git either: the turn committed in-process.
      expect(committed).toBeNull();
      expect(kinds).toEqual([]);
      expect(gc.sessions[0]?.skipped).toBeUndefined();
      expect(log).toHaveLength(before + 1);
      // After gc git's pack may hold the head commit as a delta: the next commit still runs no hook.
      await chatTurn(store.db, variant, "turn_2");
      expect(await store.db.gitLog(variant)).toHaveLength(before + 2);
      expect(markersLeft(markers)).toEqual([]);
    }
  });

  it("a hook never hands the commit to git: COMMIT_EDITMSG keeps git's last message", async () => {
    const { dir } = await plantedSession("hooks");
    const message = readFileSync(join(dir, ".git", "COMMIT_EDITMSG"), "utf8");
    await chatTurn(store.db, "hooks", "turn_in_process");
    expect(readFileSync(join(dir, ".git", "COMMIT_EDITMSG"), "utf8")).toBe(message);
  });
});

describe("reading a config's keys", () => {
  it("finds keys on header lines, in subsections and after continued values, and refuses what it cannot read", () => {
    expect(
      configKeys('[core] fsmonitor = x\n[filter "a b"]\n\tclean = a \\\n fsmonitor = no\n;c\n#d\n[User]\n\tName = n\n'),
    ).toEqual(["core.fsmonitor", "filter.a b.clean", "user.name"]);
    expect(() => configKeys("[core\n")).toThrow(/section header/);
    expect(() => configKeys("fsmonitor = x\n")).toThrow(/outside any section/);
  });
});

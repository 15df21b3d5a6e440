import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../../ids.js";
import { GIT_EXCLUDES } from "../layout.js";
import { commitBody, type CommitIdentity } from "./in-process-commit.js";
import { writeLooseObject } from "./loose-objects.js";

/**
 * What `git init --shared=0600 --initial-branch=main` writes that git needs,
 * plus our identity and exclusions. The octal core.sharedRepository keeps
 * whatever git itself later writes private (directories 0700, files 0600).
 */
function configText(identity: CommitIdentity): string {
  return [
    "[core]",
    "\trepositoryformatversion = 0",
    "\tfilemode = true",
    "\tbare = false",
    "\tlogallrefupdates = true",
    "\tsharedrepository = 0600",
    "[receive]",
    "\tdenyNonFastforwards = true",
    "[user]",
    `\tname = ${identity.name}`,
    `\temail = ${identity.email}`,
    "",
  ].join("\n");
}

/**
 * Creates a session's repository in this process, with its first commit
 * ("session init", empty), as `git init` + `git commit --allow-empty` would.
 * It is built whole in `building` (a folder git does not see, under `.state/`)
 * and renamed to `.git`, so a kill leaves either no repository or a complete
 * one, never a `.git` that git refuses. Returns false when `.git` appeared
 * meanwhile (another process made it): that one is kept.
 */
export function initRepositoryInProcess(
  gitDir: string,
  buildingParent: string,
  identity: CommitIdentity,
  now = new Date(),
): boolean {
  const building = join(buildingParent, `git-init-${randomHex(8)}`);
  try {
    for (const folder of ["", "objects", "objects/info", "objects/pack", "refs", "refs/heads", "refs/tags", "info"])
      mkdirSync(join(building, folder), { mode: 0o700 });
    writeFileSync(join(building, "HEAD"), "ref: refs/heads/main\n", { mode: 0o600 });
    writeFileSync(join(building, "config"), configText(identity), { mode: 0o600 });
    writeFileSync(
      join(building, "info", "exclude"),
      `# OpenProgram (TypeScript) bookkeeping\n${GIT_EXCLUDES.join("\n")}\n`,
      {
        mode: 0o600,
      },
    );
    const emptyTree = writeLooseObject(building, "tree", Buffer.alloc(0));
    const commit = writeLooseObject(building, "commit", commitBody(emptyTree, null, identity, "session init", now));
    writeFileSync(join(building, "refs", "heads", "main"), `${commit}\n`, { mode: 0o600 });
    try {
      renameSync(building, gitDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") return false;
      throw error;
    }
    return true;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

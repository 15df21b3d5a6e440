import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../../ids.js";
import { GIT_EXCLUDES } from "../layout.js";
import { commitBody, type CommitIdentity } from "./in-process-commit.js";
import { hashObject } from "./loose-objects.js";
import { packEntry, packFiles } from "./pack-file.js";

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
 * The folders of a new repository: only those git cannot do without (it
 * recognises a repository by HEAD, objects/ and refs/), the one our first
 * commit's branch lives in, objects/pack for every commit's pack, and info/ for
 * our exclusions. `git init` also makes objects/info, refs/tags, hooks and
 * branches; git makes each of those itself when it first writes there (gc,
 * tag), and every mkdir is a journal operation on the new-session path.
 */
const REPOSITORY_FOLDERS = ["", "objects", "objects/pack", "refs", "refs/heads", "info"];

const PRIVATE_FILE = { mode: 0o600, flag: "wx" } as const;

/**
 * Writes a whole new repository, with its first commit ("session init",
 * empty), into `gitDir`, which must not exist yet and must be invisible to
 * everyone until its caller renames it (or a folder around it) into place: so
 * its two objects (the empty tree and the commit) are written as one pack
 * straight under its names, with no temp file and rename (the folder is
 * private until then), as every later commit writes its own. Also makes
 * `COMMIT_EDITMSG` private before git ever writes it (git keeps the mode of a
 * file already there; core.sharedRepository does not cover it).
 */
export function writeNewRepository(gitDir: string, identity: CommitIdentity, now = new Date()): void {
  for (const folder of REPOSITORY_FOLDERS) mkdirSync(join(gitDir, folder), { mode: 0o700 });
  writeFileSync(join(gitDir, "HEAD"), "ref: refs/heads/main\n", PRIVATE_FILE);
  writeFileSync(join(gitDir, "config"), configText(identity), PRIVATE_FILE);
  writeFileSync(
    join(gitDir, "info", "exclude"),
    `# OpenProgram (TypeScript) bookkeeping\n${GIT_EXCLUDES.join("\n")}\n`,
    PRIVATE_FILE,
  );
  writeFileSync(join(gitDir, "COMMIT_EDITMSG"), "", PRIVATE_FILE);
  const tree = { type: "tree" as const, content: Buffer.alloc(0) };
  const emptyTree = hashObject(tree.type, tree.content);
  const body = { type: "commit" as const, content: commitBody(emptyTree, null, identity, "session init", now) };
  const commit = hashObject(body.type, body.content);
  const { name, pack, index } = packFiles([packEntry({ ...tree, id: emptyTree }), packEntry({ ...body, id: commit })]);
  const packMode = { mode: 0o400, flag: "wx" } as const;
  writeFileSync(join(gitDir, "objects", "pack", `${name}.pack`), pack, packMode);
  writeFileSync(join(gitDir, "objects", "pack", `${name}.idx`), index, packMode);
  writeFileSync(join(gitDir, "refs", "heads", "main"), `${commit}\n`, PRIVATE_FILE);
}

/**
 * Creates a session's repository in this process, for a session made without
 * one (by createSession without `forTurn`, or a Python store's session
 * before its first commit). It is built whole in `building` (a folder git does
 * not see, under `.state/`) and renamed to `.git`, so a kill leaves either no
 * repository or a complete one, never a `.git` that git refuses. Returns false
 * when `.git` appeared meanwhile (another process made it): that one is kept.
 */
export function initRepositoryInProcess(
  gitDir: string,
  buildingParent: string,
  identity: CommitIdentity,
  now = new Date(),
): boolean {
  const building = join(buildingParent, `git-init-${randomHex(8)}`);
  let renamed = false;
  try {
    writeNewRepository(building, identity, now);
    try {
      renameSync(building, gitDir);
      renamed = true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") return false;
      throw error;
    }
    return true;
  } finally {
    if (!renamed) rmSync(building, { recursive: true, force: true });
  }
}

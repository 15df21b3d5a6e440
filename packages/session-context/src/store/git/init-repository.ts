import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../../ids.js";
import { GIT_EXCLUDES } from "../layout.js";
import { commitBody, type CommitIdentity } from "./in-process-commit.js";
import { hashObject, looseObjectBytes, type GitObjectType } from "./loose-objects.js";

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
 * commit's branch lives in, and info/ for our exclusions. `git init` also makes
 * objects/info, objects/pack, refs/tags, hooks and branches; git makes each of
 * those itself when it first writes there (gc, repack, tag), and every mkdir
 * is a journal operation on the new-session path.
 */
const REPOSITORY_FOLDERS = ["", "objects", "refs", "refs/heads", "info"];

const PRIVATE_FILE = { mode: 0o600, flag: "wx" } as const;

/**
 * Writes a whole new repository, with its first commit ("session init",
 * empty), into `gitDir`, which must not exist yet and must be invisible to
 * everyone until its caller renames it (or a folder around it) into place: so
 * the loose objects are written straight under their names, with no temp
 * file and rename each (their folder is private until then). Also makes
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
  const fanOuts = new Set<string>();
  const emptyTree = writeObjectInPrivateFolder(gitDir, "tree", Buffer.alloc(0), fanOuts);
  const commit = writeObjectInPrivateFolder(
    gitDir,
    "commit",
    commitBody(emptyTree, null, identity, "session init", now),
    fanOuts,
  );
  writeFileSync(join(gitDir, "refs", "heads", "main"), `${commit}\n`, PRIVATE_FILE);
}

/**
 * A loose object written straight under its name (git's read-only mode): see writeNewRepository. `fanOuts`: the
 * object folders made so far (the commit's id may begin as the empty tree's does).
 */
function writeObjectInPrivateFolder(
  gitDir: string,
  type: GitObjectType,
  content: Uint8Array,
  fanOuts: Set<string>,
): string {
  const id = hashObject(type, content);
  const folder = join(gitDir, "objects", id.slice(0, 2));
  if (!fanOuts.has(folder)) mkdirSync(folder, { mode: 0o700 });
  fanOuts.add(folder);
  writeFileSync(join(folder, id.slice(2)), looseObjectBytes(type, content), { mode: 0o400, flag: "wx" });
  return id;
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

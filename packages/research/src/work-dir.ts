import { randomBytes } from "node:crypto";
import { closeSync, openSync, statSync, unlinkSync } from "node:fs";
import { dirname, join, relative, resolve, isAbsolute } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";

/** The work dir of a run: the given one resolved against the cwd, else `./research/<sessionId>`. */
export function resolveWorkDir(workDir: string | undefined, sessionId: string): string {
  return resolve(workDir ?? join("research", sessionId));
}

/**
 * Throws InvalidInputError unless `workDir` is a directory this process can
 * write to, or can be created as one: a path that is a file, lies under a
 * file, or whose nearest existing directory refuses a probe file is refused.
 * The probe is real (create, then remove), so it also holds for root and for
 * read-only mounts, where permission bits say nothing. Creates nothing.
 */
export function checkWorkDir(workDir: string): void {
  let existing = workDir;
  let stat = statIfAny(existing);
  while (!stat && dirname(existing) !== existing) {
    existing = dirname(existing);
    stat = statIfAny(existing);
  }
  if (!stat)
    throw new InvalidInputError(`The work dir ${workDir} cannot be created: none of its parent directories exists.`);
  if (!stat.isDirectory()) {
    throw new InvalidInputError(
      existing === workDir
        ? `The work dir ${workDir} is a file, not a directory. Pass a directory (it is created if missing).`
        : `The work dir ${workDir} cannot be created: ${existing} is a file, not a directory. Pass a directory.`,
    );
  }
  const probe = join(existing, `.openprogram-write-check-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    closeSync(openSync(probe, "wx"));
    unlinkSync(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    const where = existing === workDir ? "" : ` (it would be created in ${existing}, which is not writable either)`;
    throw new InvalidInputError(
      `The work dir ${workDir} is not writable${where}: ${code}. Pass a directory you can write to, or fix its permissions.`,
    );
  }
}

/** Refuses a work dir inside the session store: the store and its sessions' own workdir/ belong to the core. */
export function checkOutsideStore(workDir: string, sessionsRoot: string): void {
  const inside = relative(resolve(sessionsRoot), workDir);
  if (inside === "" || (!inside.startsWith("..") && !isAbsolute(inside))) {
    throw new InvalidInputError(
      `The work dir ${workDir} is inside the session store ${sessionsRoot}. Artifacts and sessions are separate stores: pass a work dir outside it.`,
    );
  }
}

function statIfAny(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: a parent is a file; keep walking up until we reach it.
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw new InvalidInputError(`Cannot inspect the work dir ${path}: ${code ?? (error as Error).message}.`);
  }
}

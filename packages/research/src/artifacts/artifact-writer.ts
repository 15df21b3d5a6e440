import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  constants,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { ArtifactWriteError } from "../errors.js";
import { removeStaleTempFiles, tempFileName } from "./stale-temp-files.js";
import { latestVersionPath, nextVersionPath } from "./versioned-name.js";

/**
 * Artifacts are private like the session store: a paper draft, the ideas and
 * the review are as personal as the conversation that produced them. Folders
 * this writer creates get 0700 (folders that already exist keep their mode:
 * the work dir is the user's), files 0600.
 */
export const ARTIFACT_FILE_MODE = 0o600;
/** Mode of the folders the writer creates; see ARTIFACT_FILE_MODE. */
export const ARTIFACT_DIR_MODE = 0o700;

/**
 * Writes a run's artifacts into its work dir. Each file is written whole to a
 * temp file, fsynced and renamed into place, so an interrupted run leaves
 * complete files. A file that already exists with other content is kept: it
 * is linked to `<name>.v<N>.md` first (see nextVersionPath), and the name is
 * then replaced atomically. Identical content is left as it is, and a temp
 * file a killed writer left beside the artifact is removed.
 */
export class ArtifactWriter {
  /** Artifacts written by this run, relative to the work dir, in order, each once. */
  readonly written: string[] = [];
  /** Earlier files moved aside by this run, relative to the work dir. */
  readonly versioned: string[] = [];

  constructor(readonly workDir: string) {}

  /** Writes `artifact` ('/'-separated, relative to the work dir); returns its absolute path. */
  write(artifact: string, content: string): string {
    const path = this.pathOf(artifact);
    const bytes = Buffer.from(content, "utf8");
    let temp: string | null = null;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: ARTIFACT_DIR_MODE });
      removeStaleTempFiles(dirname(path), basename(path));
      const existing = readIfExists(path);
      if (existing === null || !existing.equals(bytes)) {
        temp = join(dirname(path), tempFileName(basename(path), process.pid, randomBytes(4).toString("hex")));
        writeDurably(temp, bytes);
        if (existing !== null) this.versioned.push(this.relativeName(keepAside(path)));
        renameSync(temp, path);
        temp = null;
        syncDirectory(dirname(path));
      }
    } catch (error) {
      if (temp !== null) removeQuietly(temp);
      throw new ArtifactWriteError(this.workDir, artifact, error);
    }
    if (!this.written.includes(artifact)) this.written.push(artifact);
    return path;
  }

  /**
   * The newest version kept beside `artifact` when its content has SHA-256
   * `digest` (hex), relative to the work dir; else null. A write stopped after
   * it replaced the file left this version behind (see RecordedArtifacts).
   */
  latestVersionHolding(artifact: string, digest: string): string | null {
    const latest = latestVersionPath(this.pathOf(artifact));
    if (latest === null) return null;
    const bytes = readIfExists(latest);
    if (bytes === null || createHash("sha256").update(bytes).digest("hex") !== digest) return null;
    return this.relativeName(latest);
  }

  private pathOf(artifact: string): string {
    return join(this.workDir, ...artifact.split("/"));
  }

  private relativeName(path: string): string {
    return relative(this.workDir, path).split(sep).join("/");
  }
}

function readIfExists(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

function writeDurably(path: string, bytes: Buffer): void {
  const fd = openSync(path, "wx", ARTIFACT_FILE_MODE);
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Gives the current file a version name while it keeps its own, so the name is never missing. */
function keepAside(path: string): string {
  const leftover = linkLeftByStoppedWrite(path);
  if (leftover !== null) return leftover;
  for (;;) {
    const target = nextVersionPath(path);
    try {
      linkSync(path, target);
      return target;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another writer took this version number between the scan and the link: scan again.
      if (code === "EEXIST") continue;
      // File systems without hard links get a copy (exclusive, so nothing is overwritten).
      if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EXDEV") {
        copyFileSync(path, target, constants.COPYFILE_EXCL);
        return target;
      }
      throw error;
    }
  }
}

/**
 * The newest version when it is the file itself (one inode, two names): a
 * write stopped (a kill -9) between keeping the file aside and replacing it.
 * Its version already exists, so the write that finishes the job makes none.
 */
function linkLeftByStoppedWrite(path: string): string | null {
  const latest = latestVersionPath(path);
  if (latest === null) return null;
  const current = statSync(path);
  const version = statSync(latest, { throwIfNoEntry: false });
  return version !== undefined && version.ino === current.ino && version.dev === current.dev ? latest : null;
}

function syncDirectory(path: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the rename itself is still atomic.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

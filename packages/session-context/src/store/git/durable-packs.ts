import { join } from "node:path";

/**
 * The files of `.git` this process has made durable (fsynced, or written durably as a merged pack is), by
 * repository: a checkpoint into the commit (wal-checkpoint.ts) fsyncs only the others. Names of packs merged away
 * stay until the set is started again; they cost nothing but memory, bounded here.
 */
const durableByRepository = new Map<string, Set<string>>();
const MAX_REMEMBERED = 4096;

/** The set of durable paths under `gitDir` (created empty on first use). */
export function durableGitFiles(gitDir: string): Set<string> {
  let files = durableByRepository.get(gitDir);
  if (!files || files.size > MAX_REMEMBERED) {
    if (durableByRepository.size > 1024) durableByRepository.clear();
    files = new Set();
    durableByRepository.set(gitDir, files);
  }
  return files;
}

/** Notes a pack written durably (its `.pack` and `.idx`), so no checkpoint fsyncs it again. */
export function noteDurablePack(gitDir: string, name: string): void {
  const files = durableGitFiles(gitDir);
  const folder = join(gitDir, "objects", "pack");
  files.add(join(folder, `${name}.pack`));
  files.add(join(folder, `${name}.idx`));
}

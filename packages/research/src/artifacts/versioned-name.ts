import { readdirSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";

/**
 * The name an existing file moves to before it is replaced: `<stem>.v<N><ext>`
 * beside it, N one more than the highest version already there, so v1 is the
 * oldest ("paper.md" -> "paper.v1.md", then "paper.v2.md").
 */
export function nextVersionPath(path: string): string {
  return versionPath(path, highestVersion(path) + 1);
}

/** The newest version kept beside `path` (`<stem>.v<highest N><ext>`), or null when there is none. */
export function latestVersionPath(path: string): string | null {
  const highest = highestVersion(path);
  return highest === 0 ? null : versionPath(path, highest);
}

function highestVersion(path: string): number {
  const extension = extname(path);
  const stem = basename(path, extension);
  const pattern = new RegExp(`^${escapeRegExp(stem)}\\.v(\\d+)${escapeRegExp(extension)}$`);
  let highest = 0;
  for (const entry of readdirSync(dirname(path))) {
    const match = pattern.exec(entry);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest;
}

function versionPath(path: string, version: number): string {
  const extension = extname(path);
  return join(dirname(path), `${basename(path, extension)}.v${version}${extension}`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

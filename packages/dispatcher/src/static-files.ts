import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebAssetsMissingError } from "./errors.js";

/** The page's files: `web/` beside `src/` and `dist/`, so both the sources and the build find it. */
export const WEB_DIRECTORY = fileURLToPath(new URL("../web/", import.meta.url));

/** One file of the page, held in memory. */
export interface WebAsset {
  body: Buffer;
  type: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/**
 * Reads the page's files once, by URL path ("/" is index.html). Only the
 * top-level files of `web/` with a known type are served, so no request path
 * can reach anything else on disk.
 */
export function loadWebAssets(directory: string = WEB_DIRECTORY): Map<string, WebAsset> {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch (error) {
    throw new WebAssetsMissingError(
      `The web page's files are missing (${directory}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}); reinstall @openprogram/dispatcher.`,
    );
  }
  const assets = new Map<string, WebAsset>();
  for (const name of names) {
    const type = CONTENT_TYPES[extname(name)];
    const path = join(directory, name);
    if (!type || !statSync(path).isFile()) continue;
    const body = readFileSync(path);
    assets.set(`/${name}`, { body, type, etag: `"${createHash("sha256").update(body).digest("hex").slice(0, 16)}"` });
  }
  const index = assets.get("/index.html");
  if (!index)
    throw new WebAssetsMissingError(`${join(directory, "index.html")} is missing; reinstall @openprogram/dispatcher.`);
  assets.set("/", index);
  return assets;
}

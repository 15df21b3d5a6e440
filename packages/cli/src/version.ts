import { readFileSync } from "node:fs";

/**
 * The CLI's version, read from its own package.json (next to dist/ in an
 * installed package, next to src/ in the repository), so `--version` never
 * drifts from what npm installed.
 */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version?: unknown;
  };
  return typeof manifest.version === "string" ? manifest.version : "0.0.0";
}

// vitest globalSetup for packages whose tests run built output (a CLI binary,
// a child-process entry): builds the package and its workspace dependencies
// through turbo when a dist/ is missing or older than its sources. Under
// `pnpm test` turbo has already built everything, so this only stats files.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function workspacePackages(): Map<string, string> {
  const byName = new Map<string, string>();
  for (const entry of readdirSync(join(repoRoot, "packages"))) {
    const manifest = join(repoRoot, "packages", entry, "package.json");
    if (existsSync(manifest))
      byName.set((JSON.parse(readFileSync(manifest, "utf8")) as Manifest).name, join(repoRoot, "packages", entry));
  }
  return byName;
}

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function oldestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let oldest = Number.POSITIVE_INFINITY;
  for (const entry of readdirSync(path)) oldest = Math.min(oldest, oldestMtime(join(path, entry)));
  return oldest;
}

function isStale(dir: string): boolean {
  const dist = join(dir, "dist");
  if (!existsSync(dist) || readdirSync(dist).length === 0) return true;
  const sources = [join(dir, "src"), join(dir, "web"), join(dir, "package.json")].filter(existsSync);
  return Math.max(...sources.map(newestMtime)) > oldestMtime(dist);
}

export default function ensureBuilt(): void {
  const manifest = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8")) as Manifest;
  const packages = workspacePackages();
  const needed = new Set<string>();
  const visit = (name: string): void => {
    if (needed.has(name) || !packages.has(name)) return;
    needed.add(name);
    const deps =
      (JSON.parse(readFileSync(join(packages.get(name) as string, "package.json"), "utf8")) as Manifest).dependencies ??
      {};
    for (const dep of Object.keys(deps)) visit(dep);
  };
  // A test-only package (tests/*) is not built itself; what it tests is.
  if (packages.has(manifest.name)) visit(manifest.name);
  else for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) visit(dep);
  const stale = [...needed].filter((name) => isStale(packages.get(name) as string));
  if (stale.length === 0) return;
  process.stderr.write(`ensure-built: building ${stale.join(", ")} (dist missing or older than src)\n`);
  execFileSync("pnpm", ["exec", "turbo", "run", "build", `--filter=${manifest.name}...`, "--output-logs=errors-only"], {
    cwd: repoRoot,
    stdio: "inherit",
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
  });
}

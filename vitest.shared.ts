// Shared vitest settings: every package's tests import workspace packages from
// their sources, so `pnpm test` never runs against a stale build of a sibling.
//
// Tests come in two sets, chosen by vitest's `--mode`:
//   light  (`pnpm test`, the `test` script): everything but the heavy files; `npm test`
//          runs three packages' light sets at a time.
//   heavy  (`pnpm test:heavy`): files that load the whole machine (many processes, kill -9
//          loops, hundreds of commits, a browser, npm installs). `npm test` runs them after the
//          light set, one package at a time and one file at a time, so no two ever overlap.
//   any other mode (a bare `vitest run <file>`, an editor): every file.
// Outside the heavy set, test files share their worker's module graph (`isolate: false`),
// but for those a package names `isolated` (see SharedTestOptions): a test must leave
// what every module sees (process.env, globals, a module's state) as it found it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { configDefaults, type ViteUserConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));
const TEST_FILES = ["src/**/*.test.ts", "test/**/*.test.ts"];

/**
 * Every `exports` entry of every workspace package (`@openprogram/session-context/store`, ...),
 * aliased to the source its built file comes from (`./dist/entries/store.js` ->
 * `src/entries/store.ts`): package.json is the one list of entry points.
 */
function workspaceAliases(): Array<{ find: RegExp; replacement: string }> {
  const aliases: Array<{ find: RegExp; replacement: string }> = [];
  for (const dir of readdirSync(join(root, "packages"))) {
    const manifestPath = join(root, "packages", dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
      name: string;
      exports?: Record<string, string | { import?: string }>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      const built = typeof target === "string" ? target : target.import;
      if (!built?.startsWith("./dist/")) continue;
      const specifier = subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
      const source = `src/${built.slice("./dist/".length).replace(/\.js$/, ".ts")}`;
      aliases.push({
        find: new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`),
        replacement: resolve(root, "packages", dir, source),
      });
    }
  }
  return aliases;
}

/** Options of a package's test config. */
export interface SharedTestOptions {
  /** The tests run built output (a binary, a child entry): build stale dist/ first. */
  needsBuild?: boolean;
  /** Globs (relative to the package) of the heavy test files; see the top of this file. */
  heavy?: readonly string[];
  /** vitest's `--mode`: "light", "heavy", or anything else for every file. */
  mode?: string;
  /**
   * Globs of the light files that need a fresh module graph of their own (a `vi.mock`, which applies to every
   * module of the graph it runs in). Every other light file shares one worker's modules (vitest's
   * `isolate: false`): measured on 2026-12-06, the core's light set took 133 s of CPU that way against 194 s and
   * the dispatcher's 24 against 72, each file importing the workspace's sources anew. Heavy files stay isolated.
   */
  isolated?: readonly string[];
}

/** A package's vitest config: workspace aliases, the light or heavy set, the JSON report for the summary. */
export function sharedTestConfig(packageDir: string, options: SharedTestOptions = {}): ViteUserConfig {
  const heavy = [...(options.heavy ?? [])];
  const set = options.mode === "light" || options.mode === "heavy" ? options.mode : "all";
  const reportDir = process.env.OPENPROGRAM_TEST_REPORT_DIR;
  const reporters: Array<string | [string, Record<string, unknown>]> = ["default"];
  // One report per package, set and shard (`npm test` runs the CLI's light set as two shards, in two lanes);
  // scripts/test-summary.mjs sums them and prints each one's wall time.
  const shard = shardOf(process.argv);
  const reportName = `${basename(packageDir)}${shard ? `.shard-${shard.replace("/", "-of-")}` : ""}${set === "heavy" ? ".heavy" : ""}.json`;
  if (reportDir) {
    reporters.push(["json", { outputFile: join(reportDir, reportName) }]);
    // The errors no test owned, which the JSON report drops (see the reporter).
    reporters.push([
      resolve(root, "scripts/unhandled-errors-reporter.mjs"),
      { outputFile: join(reportDir, reportName.replace(/\.json$/, ".unhandled.json")) },
    ]);
  }
  const include = set === "heavy" ? heavy : TEST_FILES;
  const exclude = set === "light" ? [...configDefaults.exclude, ...heavy] : configDefaults.exclude;
  const isolated = [...(options.isolated ?? [])];
  const name = basename(packageDir);
  return {
    resolve: { alias: workspaceAliases() },
    test: {
      root: packageDir,
      // Light files share one module graph; those named isolated get one each, as a project of their own. Each
      // project gets its own file lists (a project extending this config would add its lists to these).
      ...(set === "heavy"
        ? { include, exclude }
        : isolated.length === 0
          ? { include, exclude, isolate: false }
          : {
              projects: [
                { extends: true, test: { name: `${name} (isolated)`, include: isolated, exclude, isolate: true } },
                { extends: true, test: { name, include, exclude: [...exclude, ...isolated], isolate: false } },
              ],
            }),
      // Heavy files one after another: each is sized for a machine that runs nothing else of ours.
      fileParallelism: set !== "heavy",
      pool: "forks",
      testTimeout: 60_000,
      hookTimeout: 60_000,
      ...(options.needsBuild ? { globalSetup: [resolve(root, "tools/ensure-built.ts")] } : {}),
      reporters: reporters as NonNullable<NonNullable<ViteUserConfig["test"]>["reporters"]>,
    },
  };
}

/** vitest's `--shard <index>/<count>` (or `--shard=...`) among the command's arguments, or null. */
function shardOf(argv: readonly string[]): string | null {
  for (const [index, arg] of argv.entries()) {
    const value =
      arg === "--shard" ? argv[index + 1] : arg.startsWith("--shard=") ? arg.slice("--shard=".length) : null;
    if (value && /^\d+\/\d+$/.test(value)) return value;
  }
  return null;
}

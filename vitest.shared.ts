// Shared vitest settings: every package's tests import workspace packages from
// their sources, so `pnpm test` never runs against a stale build of a sibling.
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ViteUserConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

/** Options of a package's test config. */
export interface SharedTestOptions {
  /** The tests run built output (a binary, a child entry): build stale dist/ first. */
  needsBuild?: boolean;
}

export function sharedTestConfig(packageDir: string, options: SharedTestOptions = {}): ViteUserConfig {
  const reportDir = process.env.OPENPROGRAM_TEST_REPORT_DIR;
  const reporters: Array<string | [string, Record<string, unknown>]> = ["default"];
  if (reportDir) reporters.push(["json", { outputFile: join(reportDir, `${basename(packageDir)}.json`) }]);
  return {
    resolve: {
      alias: [
        {
          find: /^@openprogram\/(session-context|dispatcher|cli)\/testing$/,
          replacement: resolve(root, "packages/$1/src/testing/index.ts"),
        },
        {
          find: /^@openprogram\/(session-context|dispatcher|process-runner|research|cli)$/,
          replacement: resolve(root, "packages/$1/src/index.ts"),
        },
      ],
    },
    test: {
      root: packageDir,
      include: ["src/**/*.test.ts", "test/**/*.test.ts"],
      pool: "forks",
      testTimeout: 60_000,
      hookTimeout: 60_000,
      ...(options.needsBuild ? { globalSetup: [resolve(root, "tools/ensure-built.ts")] } : {}),
      reporters: reporters as NonNullable<NonNullable<ViteUserConfig["test"]>["reporters"]>,
    },
  };
}

// Runs every package's tests in one vitest process (handy in an editor);
// `pnpm test` runs them per package through turbo instead.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { projects: ["packages/*"] },
});

import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// Every test here is heavy (every entry, child processes, servers): run alone by test:heavy.
export default defineConfig(({ mode }) =>
  sharedTestConfig(import.meta.dirname, { needsBuild: true, heavy: ["test/**/*.test.ts"], mode }),
);

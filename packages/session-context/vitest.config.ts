import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// Heavy (run alone by test:heavy): 500 concurrent contexts.
export default defineConfig(({ mode }) =>
  sharedTestConfig(import.meta.dirname, { heavy: ["test/concurrent-contexts.test.ts"], mode }),
);

import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// The child runs the built dist/child-entry.js: rebuild a stale dist first.
// Heavy (run alone by test:heavy): ten child processes at once.
export default defineConfig(({ mode }) =>
  sharedTestConfig(import.meta.dirname, { needsBuild: true, heavy: ["test/concurrent-children.test.ts"], mode }),
);

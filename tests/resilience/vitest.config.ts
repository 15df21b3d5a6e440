import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// Heavy (run alone by test:heavy): the kill -9 loops, and 80 command lines each run in a new
// CLI process (24 s beside the light tests and the lint tasks, against a 60 s timeout).
export default defineConfig(({ mode }) =>
  sharedTestConfig(import.meta.dirname, {
    needsBuild: true,
    heavy: ["test/cli-kill.test.ts", "test/dispatcher-kill.test.ts", "test/cli-argument-properties.test.ts"],
    mode,
  }),
);

import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// Heavy (run alone by test:heavy): the kill -9 loops.
export default defineConfig(({ mode }) =>
  sharedTestConfig(import.meta.dirname, {
    needsBuild: true,
    heavy: ["test/cli-kill.test.ts", "test/dispatcher-kill.test.ts"],
    mode,
  }),
);

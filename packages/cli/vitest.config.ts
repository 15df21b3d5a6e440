import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// The tests run the built binary (dist/bin.js) in child processes, as a user would.
export default defineConfig(({ mode }) => sharedTestConfig(import.meta.dirname, { needsBuild: true, mode }));

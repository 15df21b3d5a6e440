import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// needsBuild: test/demo.test.ts runs the built package in a child process.
export default defineConfig(({ mode }) => sharedTestConfig(import.meta.dirname, { needsBuild: true, mode }));

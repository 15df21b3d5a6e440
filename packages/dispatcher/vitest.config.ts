import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// The SIGTERM test runs serve() from dist/ in a child process.
export default defineConfig(sharedTestConfig(import.meta.dirname, { needsBuild: true }));

import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// The child runs the built dist/child-entry.js: rebuild a stale dist first.
export default defineConfig(sharedTestConfig(import.meta.dirname, { needsBuild: true }));

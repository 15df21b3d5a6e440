import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// The SIGTERM test runs serve() from dist/ in a child process.
// Heavy (run alone by test:heavy): the browser, 50 clients at once, 16 concurrent turns, three replica processes,
// long replies (slow-client, reply-memory).
export default defineConfig(({ mode }) =>
  sharedTestConfig(import.meta.dirname, {
    needsBuild: true,
    heavy: [
      "test/web-page.browser.test.ts",
      "test/first-hour.browser.test.ts",
      "test/branches.browser.test.ts",
      "test/tools.browser.test.ts",
      "test/budgets.browser.test.ts",
      "test/structured.browser.test.ts",
      "test/mcp-servers.browser.test.ts",
      "test/isolation.test.ts",
      "test/limits.test.ts",
      "test/slow-client.test.ts",
      "test/reply-memory.test.ts",
      "test/cluster/cluster-processes.test.ts",
      "test/cluster/cluster.browser.test.ts",
    ],
    mode,
  }),
);

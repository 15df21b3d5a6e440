import { defineConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

// Heavy (run alone by test:heavy): concurrent contexts (a hundred turns, each with a git
// commit), and type-aware ESLint over the whole source tree (76 s beside the light tests and
// the lint tasks of every package, against a 60 s timeout; about 15 s alone), a child killed mid-stream, and a
// 400-turn session kept inside a small window by compaction, and eight children killed mid-turn (commit-kill).
// Built first: test/entry-points.test.ts imports every `exports` entry from dist/.
// Isolated: the files that mock node:fs (vi.mock applies to the whole module graph they run in). Every other light
// file shares one module graph (see sharedTestConfig).
export default defineConfig(({ mode }) =>
  sharedTestConfig(import.meta.dirname, {
    needsBuild: true,
    heavy: [
      "test/commit-kill.test.ts",
      "test/concurrent-contexts.test.ts",
      "test/lint-boundary.test.ts",
      "test/streaming-crash.test.ts",
      "test/long-session.test.ts",
    ],
    isolated: [
      "test/commit-overlap.test.ts",
      "test/create-session-durability.test.ts",
      "test/deferred-name-sync.test.ts",
      "test/disk-trouble.test.ts",
      "test/renames-beside-log.test.ts",
      "test/wal-sync-placement.test.ts",
      "test/grouped-writes.test.ts",
      "test/lease-lock.test.ts",
      "test/node-batches.test.ts",
      "test/rename-files-in-place.test.ts",
    ],
    mode,
  }),
);

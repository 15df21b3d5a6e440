// A temp session store, a temp directory for work dirs, and a real loopback
// server speaking the OpenAI chat-completions protocol with a runtime for it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import {
  createTempStore,
  removeTree,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeReplyHandler,
  type TempStore,
} from "@openprogram/session-context/testing";

/** Everything a research test needs; `close()` removes it all. */
export interface ResearchFixture {
  store: TempStore;
  server: FakeOpenAIServer;
  runtime: Runtime;
  /** A temp directory that work dirs go under. */
  dir: string;
  /** `<dir>/<name>`. */
  workDir(name?: string): string;
  close(): Promise<void>;
}

/** Starts a fixture whose server answers with `handler`. */
export async function startResearchFixture(handler: FakeReplyHandler): Promise<ResearchFixture> {
  const store = createTempStore("openprogram-research-test-");
  const dir = mkdtempSync(join(tmpdir(), "openprogram-research-work-"));
  const server = await startFakeOpenAIServer(handler);
  const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "fake-model", maxRetries: 0 });
  if (!runtime) throw new Error("createRuntime(config) returned no runtime");
  return {
    store,
    server,
    runtime,
    dir,
    workDir: (name = "work") => join(dir, name),
    async close() {
      await server.close();
      store.cleanup();
      removeTree(dir);
    },
  };
}

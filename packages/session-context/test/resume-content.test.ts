// A turn stopped between an invalid structured reply and its retry (the retry
// failing, or the process killed with SIGKILL while the retry was out) resumes
// from the record: the recorded reply is not asked for again, and the image goes
// out as recorded even though the file changed meanwhile.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sessionContext, type Runtime } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { moduleProgramRef, resumeTurn } from "../src/entries/turns.js";
import { createTempStore, startFakeOpenAIServer, type FakeOpenAIServer, type TempStore } from "../src/testing/index.js";
import { describeImage } from "./programs/describe-image.mjs";
import { childScript } from "./helpers.js";

const MODULE = fileURLToPath(new URL("./programs/describe-image.mjs", import.meta.url));
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

let store: TempStore;
let server: FakeOpenAIServer;
let runtime: Runtime;
let failSecond = true;
/** Called when the retry (the second request) arrives; a test that kills the turn there sets it. */
let onRetry: (() => void) | null = null;

beforeEach(async () => {
  store = createTempStore("openprogram-resume-content-");
  failSecond = true;
  onRetry = null;
  server = await startFakeOpenAIServer((_request, index) => {
    if (index === 0) return "It is a pixel."; // not JSON: sent back with the problem
    if (index === 1 && onRetry) {
      onRetry();
      return { delayMs: 60_000, reply: "never sent: the process is gone" };
    }
    if (index === 1 && failSecond) return { status: 500, message: "the retry fails" };
    return JSON.stringify({ subject: "a pixel" });
  });
  runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
});
afterEach(async () => {
  await server.close();
  store.cleanup();
});

describe("resuming an exec with content blocks and a schema retry", () => {
  it("reuses the invalid reply, sends the retry once with the recorded image, and finishes", async () => {
    const path = join(store.home, "pixel.png");
    writeFileSync(path, PNG);
    const program = { ref: moduleProgramRef(MODULE, "describeImage"), input: { path } };
    await expect(
      sessionContext({ sessionId: "pixel", db: store.db, runtime, program, source: "test" }, () =>
        describeImage({ path }),
      ),
    ).rejects.toMatchObject({ code: "provider_error" });
    expect(server.requests).toHaveLength(2);
    const [first, failedRetry] = server.requests.map((request) => request.body);

    writeFileSync(path, Buffer.concat([PNG, Buffer.from("changed since")]));
    failSecond = false;
    const result = await resumeTurn({ sessionId: "pixel", db: store.db, runtime, asker: null });

    expect(result).toEqual({ subject: "a pixel" });
    // The first request (answered, recorded) is not sent again; the failed retry is sent once more, unchanged.
    expect(server.requests.map((request) => request.body)).toEqual([first, failedRetry, failedRetry]);
    expect(failedRetry).toContain(PNG.toString("base64"));
  });
});

describe("resuming after kill -9 between an invalid structured reply and its retry", () => {
  it("never asks for the recorded reply again, and sends the retry with the recorded image once more", async () => {
    const path = join(store.home, "pixel.png");
    writeFileSync(path, PNG);
    // The child is killed with SIGKILL as soon as its retry reaches the server: the invalid reply is recorded,
    // the retry's reply never comes.
    const child = spawn(process.execPath, ["--import", "tsx", childScript("describe-image.ts"), "killed", path], {
      env: { ...process.env, OPENPROGRAM_HOME: store.home, TEST_OPENAI_BASE_URL: server.baseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    onRetry = () => child.kill("SIGKILL");
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, by) => resolve(by)));
    expect(signal, output).toBe("SIGKILL");
    onRetry = null;
    expect(server.requests).toHaveLength(2);
    const [first, retry] = server.requests.map((request) => request.body);
    const recorded = (await store.db.loadNodes("killed")).filter((node) => node.role === "llm");
    // The retry's running node goes out with its request, not before it: the kill may land before it is written.
    expect(recorded[0]?.output).toBe("It is a pixel.");
    expect(recorded[0]?.metadata.status).toBe("completed");
    expect(recorded.slice(1).map((node) => [node.output, node.metadata.status])).toEqual(
      recorded.length === 2 ? [[null, "running"]] : [],
    );

    writeFileSync(path, Buffer.concat([PNG, Buffer.from("changed since")]));
    failSecond = false;
    const result = await resumeTurn({ sessionId: "killed", db: store.db, runtime, asker: null });

    expect(result).toEqual({ subject: "a pixel" });
    // The invalid reply is reused from the record; the retry whose reply never came is sent again, unchanged.
    expect(server.requests.map((request) => request.body)).toEqual([first, retry, retry]);
    expect(retry).toContain(PNG.toString("base64"));
    const llm = (await store.db.loadNodes("killed")).filter((node) => node.role === "llm");
    expect(llm.filter((node) => node.output === "It is a pixel.")).toHaveLength(1);
    expect(llm.at(-1)?.metadata).toMatchObject({ status: "completed", parsed_output: { subject: "a pixel" } });
  });
});

import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { formatResultSafely, jsonLineWithResult } from "../src/result-output.js";
import type { CliIo } from "../src/io.js";

/** A stdout whose every write fails with this system error. */
function failingStdout(code: string, message: string): Writable {
  return new Writable({
    write(_chunk, _encoding, done) {
      done(Object.assign(new Error(`${code}: ${message}, write`), { code }));
    },
  });
}

function ioWith(stdout: NodeJS.WritableStream): { io: CliIo; stderr: () => string } {
  const stderr = new PassThrough();
  let text = "";
  stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return {
    io: { stdin: new PassThrough(), stdout, stderr, env: {}, cwd: process.cwd() },
    stderr: () => text,
  };
}

describe("write errors on stdout", () => {
  it("a full disk fails the command with exit 1, naming the error", async () => {
    const { io, stderr } = ioWith(failingStdout("ENOSPC", "no space left on device"));
    expect(await main(["node", "openprogram", "--version"], io)).toBe(1);
    expect(stderr()).toBe(
      "error [output_failed]: Could not write to stdout (ENOSPC: no space left on device, write); the output is incomplete.\n",
    );
  });

  it("a closed pipe (| head) ends quietly with 141, as SIGPIPE would", async () => {
    const { io, stderr } = ioWith(failingStdout("EPIPE", "broken pipe"));
    expect(await main(["node", "openprogram", "--version"], io)).toBe(141);
    expect(stderr()).toBe("");
  });

  it("a working stdout keeps the command's own exit code", async () => {
    const stdout = new PassThrough();
    let text = "";
    stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    const { io } = ioWith(stdout);
    expect(await main(["node", "openprogram", "--version"], io)).toBe(0);
    expect(text).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("results JSON cannot carry", () => {
  let deep: unknown = "leaf";
  for (let level = 0; level < 20_000; level++) deep = { a: deep };

  it("print as the dispatcher sends them: the core's unserialisable stand-in", () => {
    expect(JSON.parse(formatResultSafely(deep) ?? "")).toEqual({
      unserialisable: expect.stringContaining("Maximum call stack size exceeded") as unknown,
    });
    const line = JSON.parse(jsonLineWithResult({ ok: true, result: deep })) as { ok: boolean; result: unknown };
    expect(line.ok).toBe(true);
    expect(line.result).toEqual({
      unserialisable: expect.stringContaining("could not be represented as JSON") as unknown,
    });
    expect(jsonLineWithResult({ ok: true, result: [1] })).toBe('{"ok":true,"result":[1]}\n');
  });
});

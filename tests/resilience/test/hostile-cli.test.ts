// What an independent hostile probe broke in the CLI (issue 13 items 11 and
// 12), tried through the real binary: stdout on a full disk and on a closed
// pipe, /dev/zero as --input-file and --answers, and a result nested deeper
// than JSON.stringify goes.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionDB } from "@openprogram/session-context/store";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_BIN, PROGRAMS } from "./helpers/hostile.js";

const home = mkdtempSync(join(tmpdir(), "openprogram-hostile-cli-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  OPENPROGRAM_HOME: home,
  OPENPROGRAM_PROVIDER: "none",
};

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the binary. `stdout`: "pipe" (collected), a file descriptor to write
 * to, or "close-early" (a pipe the reader closes after its first bytes, as
 * `| head -c 1` does).
 */
function openprogram(
  args: string[],
  options: { stdout?: "pipe" | number | "close-early"; extraEnv?: Record<string, string> } = {},
): Promise<Run> {
  const target = options.stdout ?? "pipe";
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env: { ...env, ...options.extraEnv },
    stdio: ["ignore", typeof target === "number" ? target : "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (target === "close-early") child.stdout?.destroy();
  });
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("stdout that cannot be written", () => {
  it("sessions export > /dev/full exits 1 naming the error; a closed pipe ends quietly with 141", async () => {
    const made = await openprogram(["run", `${PROGRAMS}#big`, "--input", '{"size": 2000000}', "--session", "big_one"]);
    expect(made.code).toBe(0);
    const full = openSync("/dev/full", "w");
    try {
      const result = await openprogram(["sessions", "export", "big_one"], { stdout: full });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        "error [output_failed]: Could not write to stdout (ENOSPC: no space left on device, write); the output is incomplete.\n",
      );
    } finally {
      closeSync(full);
    }
    const headed = await openprogram(["sessions", "export", "big_one"], { stdout: "close-early" });
    expect(headed.code).toBe(141);
    expect(headed.stderr).toBe("");
    // A turn's result on a closed pipe: the turn is committed all the same.
    const db = new SessionDB({ root: join(home, "sessions") });
    const before = (await db.gitLog("big_one")).length;
    const run = await openprogram(["run", `${PROGRAMS}#big`, "--input", '{"size": 2000000}', "--session", "big_one"], {
      stdout: "close-early",
    });
    expect(run.code).toBe(141);
    // Said on entering and again at the end (issue 37): nothing else, no write error.
    expect(run.stderr).toBe("session: big_one (--session big_one to continue)\n".repeat(2));
    expect((await db.gitLog("big_one")).length).toBe(before + 1);
  });
});

describe("inputs that never end", () => {
  it.each([
    [
      "--input-file",
      ["--input-file", "/dev/zero"],
      {},
      "--input-file /dev/zero is larger than 8 MiB, the most that is read (set OPENPROGRAM_MAX_INPUT_BYTES to raise it from 8 MiB)",
    ],
    [
      "--answers",
      ["--answers", "/dev/zero"],
      { OPENPROGRAM_MAX_INPUT_BYTES: "1048576" },
      "the answers file /dev/zero is larger than 1 MiB, the most that is read (OPENPROGRAM_MAX_INPUT_BYTES=1048576)",
    ],
  ])(
    "%s /dev/zero stops at the limit with input_too_large, exit 2, and creates nothing",
    async (_flag, args, extraEnv, message) => {
      const result = await openprogram(["run", `${PROGRAMS}#quick`, ...args, "--session", "never_made"], { extraEnv });
      expect(result.stderr).toBe(`error [input_too_large]: ${message}; pass a smaller file.\n`);
      expect(result.code).toBe(2);
      expect(await new SessionDB({ root: join(home, "sessions") }).getSession("never_made")).toBeNull();
    },
  );

  it("reads a file under the limit, and refuses it once the limit is lowered below its size", async () => {
    const input = join(home, "input.json");
    writeFileSync(input, JSON.stringify({ text: "y".repeat(2 * 1024 * 1024) }));
    const tooBig = await openprogram(["run", `${PROGRAMS}#quick`, "--input-file", input], {
      extraEnv: { OPENPROGRAM_MAX_INPUT_BYTES: String(1024 * 1024) },
    });
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain(`--input-file ${input} is larger than 1 MiB`);
    const fits = await openprogram(["run", `${PROGRAMS}#quick`, "--input-file", input]);
    expect(fits.code).toBe(0);
    expect(fits.stdout.length).toBe(2 * 1024 * 1024 + 1);
  });
});

describe("a result nested 20,000 deep", () => {
  it("commits the turn and prints the stand-in the dispatcher sends, with and without --json", async () => {
    const plain = await openprogram([
      "run",
      `${PROGRAMS}#deep`,
      "--input",
      '{"depth": 20000}',
      "--session",
      "deep_one",
    ]);
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).toEqual({
      unserialisable: expect.stringMatching(
        /^The result could not be represented as JSON \(Maximum call stack size exceeded\)/,
      ) as unknown,
    });
    const json = await openprogram([
      "run",
      `${PROGRAMS}#deep`,
      "--input",
      '{"depth": 20000}',
      "--session",
      "deep_one",
      "--json",
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      session_id: "deep_one",
      result: { unserialisable: expect.any(String) as unknown },
    });
    const db = new SessionDB({ root: join(home, "sessions") });
    const calls = (await db.loadNodes("deep_one")).filter((node) => node.name === "deep");
    expect(calls.map((node) => node.metadata.status)).toEqual(["completed", "completed"]);
    expect((await db.gitLog("deep_one")).filter((entry) => entry.message.startsWith("turn ")).length).toBe(2);
  });
});

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { program, readRequestLog, runCli, useCliHome } from "./helpers/cli.js";

const home = useCliHome();

const KEY = "sk-test-1234567890abcdef";

describe("openprogram config", () => {
  it("prints each setting with where it came from: environment, project file, user file, default; keys masked", async () => {
    const project = join(home.home, "project");
    const nested = join(project, "src");
    mkdirSync(nested, { recursive: true });
    writeFileSync(join(project, "openprogram.config.json"), JSON.stringify({ provider: "openai", maxTokens: 900 }));
    writeFileSync(join(home.home, "config.json"), JSON.stringify({ baseUrl: "http://models.internal/v1" }));
    const result = await runCli(["config"], { env: home.env({ OPENAI_API_KEY: KEY }), cwd: nested });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const rows = result.stdout.split("\n").map((line) => line.split(/ {2,}/));
    expect(rows).toEqual(
      expect.arrayContaining([
        ["provider", "openai", "openprogram.config.json"],
        ["model", "gpt-4o-mini", "default"],
        ["baseUrl", "http://models.internal/v1", "config.json"],
        ["apiKey", "****cdef (masked)", "OPENAI_API_KEY"],
        ["maxTokens", "900", "openprogram.config.json"],
      ]),
    );
    expect(result.stdout).not.toContain(KEY);
    expect(result.stdout).toContain(`project file: ${join(project, "openprogram.config.json")}`);

    const json = await runCli(["config", "--json", "--model", "gpt-5"], {
      env: home.env({ OPENAI_API_KEY: KEY }),
      cwd: nested,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({
      provider: "openai",
      settings: expect.arrayContaining([{ name: "model", value: "gpt-5", source: "OPENPROGRAM_MODEL" }]) as unknown,
      files: { project: join(project, "openprogram.config.json"), user: join(home.home, "config.json") },
    });
  });

  it("says when nothing is configured and how to configure it", async () => {
    const empty = join(home.home, "empty");
    mkdirSync(empty);
    const result = await runCli(["config"], { env: home.env({ OPENPROGRAM_HOME: empty }), cwd: empty });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^provider +none +nothing configured$/m);
    expect(result.stdout).toContain("No model is configured: set OPENAI_API_KEY");
  });
});

describe("--env-file, --provider and --model", () => {
  it("--env-file reads variables in Node's format; variables already set win", async () => {
    const { env: scripted, log } = home.scripted(["from the env file"]);
    const envFile = home.file(
      "run.env",
      `# the scripted provider\nOPENPROGRAM_PROVIDER=scripted\nOPENPROGRAM_SCRIPT="${scripted.OPENPROGRAM_SCRIPT}"\nOPENPROGRAM_SCRIPT_LOG=${log}\nOPENPROGRAM_MODEL=from-file\n`,
    );
    const result = await runCli(
      ["--env-file", envFile, "run", `${program("summarize.mjs")}#summarize`, "--input", '{"text":"x"}'],
      { env: home.env({ OPENPROGRAM_MODEL: "from-environment" }) },
    );
    expect(result.stderr).toContain("session: ");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("from the env file\n");
    expect(readRequestLog(log)[0]?.model).toBe("from-environment");
  });

  it("--env-file of a missing file fails before anything runs, naming the file", async () => {
    const missing = join(home.home, "missing.env");
    const result = await runCli(["--env-file", missing, "config"], { env: home.env() });
    expect(result.code).not.toBe(0);
    // Node 20 itself checks --env-file wherever it appears (node: <path>: not found, exit 9); later Nodes leave it to us.
    expect(result.stderr).toContain(missing);
    expect(result.stdout).toBe("");
  });

  it("runCli reports a child that exits without reading its input by its exit code, not an unhandled EPIPE", async () => {
    // More than a pipe holds, so the write is still pending when the child exits and closes it.
    const input = "x".repeat(4 * 1024 * 1024);
    const missing = join(home.home, "missing.env");
    const result = await runCli(["--env-file", missing, "config"], { env: home.env(), input });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(missing);
  });

  it("--provider and --model win over the variables, for run and for what a child process inherits", async () => {
    const { env: scripted, log } = home.scripted(["chosen by flags"]);
    const result = await runCli(
      [
        "run",
        `${program("summarize.mjs")}#summarize`,
        "--input",
        '{"text":"x"}',
        "--provider",
        "scripted",
        "--model",
        "flag-model",
        "--isolate",
      ],
      { env: home.env({ ...scripted, OPENPROGRAM_PROVIDER: "none", OPENPROGRAM_MODEL: "env-model" }) },
    );
    expect(result.stderr).toContain("session: ");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("chosen by flags\n");
    expect(readRequestLog(log)[0]?.model).toBe("flag-model");
  });

  it("--provider refuses a name it does not know, listing the ones it does", async () => {
    const result = await runCli(["chat", "--provider", "gemini"], { env: home.env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("argument 'gemini' is invalid. Allowed choices are openai, anthropic, scripted");
  });
});

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderConfigError } from "../src/index.js";
import { createRuntime, findProjectConfig, resolveRuntimeConfig, ScriptedProvider } from "../src/entries/runtime.js";
import { removeTree } from "../src/testing/index.js";

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) removeTree(home);
});

function withConfigFile(content: unknown): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), "openprogram-config-"));
  homes.push(home);
  if (content !== undefined)
    writeFileSync(join(home, "config.json"), typeof content === "string" ? content : JSON.stringify(content));
  return { OPENPROGRAM_HOME: home };
}

describe("runtime configuration", () => {
  it("is none when nothing is configured, and explicitly none when OPENPROGRAM_PROVIDER=none", () => {
    expect(resolveRuntimeConfig(withConfigFile(undefined))).toMatchObject({
      config: null,
      origin: "none",
      explicitlyNone: false,
      sources: {},
    });
    expect(resolveRuntimeConfig({ ...withConfigFile(undefined), OPENPROGRAM_PROVIDER: "none" })).toMatchObject({
      config: null,
      explicitlyNone: true,
    });
  });

  it("infers the provider from the variables that are set", () => {
    const env = withConfigFile(undefined);
    expect(resolveRuntimeConfig({ ...env, OPENAI_BASE_URL: "http://localhost:11434/v1" })).toMatchObject({
      origin: "OPENAI_BASE_URL",
      config: { provider: "openai", baseUrl: "http://localhost:11434/v1", model: "gpt-4o-mini" },
    });
    expect(resolveRuntimeConfig({ ...env, ANTHROPIC_API_KEY: "k" })).toMatchObject({
      origin: "ANTHROPIC_API_KEY",
      config: { provider: "anthropic", apiKey: "k" },
    });
    expect(resolveRuntimeConfig({ ...env, OPENPROGRAM_SCRIPT: "/x.json" })).toMatchObject({
      config: { provider: "scripted", script: "/x.json" },
    });
  });

  it("reads $OPENPROGRAM_HOME/config.json, with the environment winning", () => {
    const env = withConfigFile({ provider: "openai", model: "from-file", baseUrl: "http://file/v1", maxTokens: 100 });
    expect(resolveRuntimeConfig(env)).toMatchObject({
      origin: "config.json",
      config: { provider: "openai", model: "from-file", baseUrl: "http://file/v1", maxTokens: 100 },
    });
    expect(
      resolveRuntimeConfig({ ...env, OPENPROGRAM_MODEL: "from-env", OPENAI_BASE_URL: "http://env/v1" }),
    ).toMatchObject({ config: { model: "from-env", baseUrl: "http://env/v1", maxTokens: 100 } });
  });

  it.each([
    [{ OPENPROGRAM_PROVIDER: "gemini" }, "OPENPROGRAM_PROVIDER", /Unknown provider "gemini"/],
    [
      { OPENPROGRAM_MAX_RETRIES: "lots", OPENAI_API_KEY: "k" },
      "OPENPROGRAM_MAX_RETRIES",
      /must be a non-negative integer/,
    ],
  ])("names the variable to fix: %j", (extra, variable, message) => {
    const error = (() => {
      try {
        resolveRuntimeConfig({ ...withConfigFile(undefined), ...extra });
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ProviderConfigError);
    expect((error as ProviderConfigError).variable).toBe(variable);
    expect((error as Error).message).toMatch(message);
  });

  it("refuses a config.json that is not JSON, naming the file", () => {
    const env = withConfigFile("{ provider: openai");
    expect(() => resolveRuntimeConfig(env)).toThrow(
      new RegExp(`${join(env.OPENPROGRAM_HOME as string, "config.json")} is not valid JSON`),
    );
  });

  it("builds each provider, and names the missing key", () => {
    expect(() => createRuntime({ provider: "anthropic" })).toThrow(/needs ANTHROPIC_API_KEY/);
    expect(() => createRuntime({ provider: "openai" })).toThrow(/needs OPENAI_API_KEY \(or OPENAI_BASE_URL/);
    expect(() => createRuntime({ provider: "scripted" })).toThrow(/needs OPENPROGRAM_SCRIPT/);
    const runtime = createRuntime({ provider: "scripted", script: ["a"], model: "m" });
    expect(runtime?.provider).toBeInstanceOf(ScriptedProvider);
    expect(runtime?.model).toBe("m");
    expect(createRuntime({ provider: "openai", baseUrl: "http://localhost:1/v1" })?.provider.name).toBe("openai");
  });

  describe("a project's openprogram.config.json", () => {
    function project(content: unknown): { root: string; nested: string } {
      const root = mkdtempSync(join(tmpdir(), "openprogram-project-"));
      homes.push(root);
      const nested = join(root, "src", "deep");
      mkdirSync(nested, { recursive: true });
      writeFileSync(
        join(root, "openprogram.config.json"),
        typeof content === "string" ? content : JSON.stringify(content),
      );
      return { root, nested };
    }

    it("is found from any directory below it, and sits between the environment and config.json", () => {
      const { root, nested } = project({ provider: "scripted", script: "replies.json", model: "from-project" });
      const env = withConfigFile({ provider: "openai", model: "from-user", baseUrl: "http://user/v1", maxTokens: 7 });
      expect(findProjectConfig(nested)).toBe(join(root, "openprogram.config.json"));
      expect(resolveRuntimeConfig(env, nested)).toEqual({
        origin: "openprogram.config.json",
        explicitlyNone: false,
        files: {
          project: join(root, "openprogram.config.json"),
          user: join(env.OPENPROGRAM_HOME as string, "config.json"),
          skipped: [],
          trust: "untrusted",
        },
        sources: {
          provider: "openprogram.config.json",
          model: "openprogram.config.json",
          script: "openprogram.config.json",
          baseUrl: "config.json",
          maxTokens: "config.json",
        },
        // A relative script path is relative to the file that names it, not to the working directory.
        config: {
          provider: "scripted",
          model: "from-project",
          script: join(root, "replies.json"),
          baseUrl: "http://user/v1",
          maxTokens: 7,
        },
      });
      expect(
        resolveRuntimeConfig({ ...env, OPENPROGRAM_PROVIDER: "openai", OPENPROGRAM_MODEL: "from-env" }, nested),
      ).toMatchObject({
        origin: "OPENPROGRAM_PROVIDER",
        config: { provider: "openai", model: "from-env" },
        sources: { provider: "OPENPROGRAM_PROVIDER", model: "OPENPROGRAM_MODEL", baseUrl: "config.json" },
      });
    });

    it("refuses a file that is not JSON, naming it", () => {
      const { root, nested } = project("{ not json");
      expect(() => resolveRuntimeConfig(withConfigFile(undefined), nested)).toThrow(
        new RegExp(`${join(root, "openprogram.config.json")} is not valid JSON`),
      );
    });

    it("names the project file when its provider is unknown", () => {
      const { root, nested } = project({ provider: "gemini" });
      expect(() => resolveRuntimeConfig(withConfigFile(undefined), nested)).toThrow(
        expect.objectContaining({ variable: join(root, "openprogram.config.json") }),
      );
    });
  });

  it.each([
    ["ollama", "http://localhost:11434/v1"],
    ["vllm", "http://localhost:8000/v1"],
    ["lmstudio", "http://localhost:1234/v1"],
  ])("accepts %s as the OpenAI-compatible provider at its usual local address", (name, baseUrl) => {
    const env = { ...withConfigFile(undefined), OPENPROGRAM_PROVIDER: name, OPENPROGRAM_MODEL: "llama3" };
    expect(resolveRuntimeConfig(env)).toMatchObject({
      config: { provider: "openai", baseUrl, model: "llama3" },
      sources: { provider: "OPENPROGRAM_PROVIDER", baseUrl: `${name}'s usual address`, model: "OPENPROGRAM_MODEL" },
    });
    expect(resolveRuntimeConfig({ ...env, OPENAI_BASE_URL: "http://gpu-box:9000/v1" })).toMatchObject({
      config: { baseUrl: "http://gpu-box:9000/v1" },
      sources: { baseUrl: "OPENAI_BASE_URL" },
    });
    expect(createRuntime(resolveRuntimeConfig(env).config ?? undefined)?.provider.name).toBe("openai");
  });
});

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, ProviderConfigError, resolveRuntimeConfig, ScriptedProvider } from "../src/index.js";
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
    expect(resolveRuntimeConfig(withConfigFile(undefined))).toEqual({
      config: null,
      origin: "none",
      explicitlyNone: false,
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
});

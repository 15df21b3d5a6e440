import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RuntimeMissingError, sessionContext } from "../src/index.js";
import { requireRuntime, resolveRuntime } from "../src/entries/runtime.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

const CONFIG_VARIABLES = ["OPENPROGRAM_PROVIDER", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"];

let store: TempStore;
// vitest's stubs restore each variable in place: assigning process.env a copy would cut it off from the process's
// real environment (os.homedir() and other native readers would no longer see later changes).
beforeEach(() => {
  store = createTempStore();
  for (const name of [...CONFIG_VARIABLES, "OPENPROGRAM_SCRIPT"]) vi.stubEnv(name, undefined);
  vi.stubEnv("OPENPROGRAM_HOME", store.home);
});
afterEach(() => {
  vi.unstubAllEnvs();
  store.cleanup();
});

/** Configures the scripted provider through the environment, as a user would. */
function configureScripted(): void {
  const script = join(store.home, "script.json");
  writeFileSync(script, JSON.stringify(["configured reply"]));
  vi.stubEnv("OPENPROGRAM_PROVIDER", "scripted");
  vi.stubEnv("OPENPROGRAM_SCRIPT", script);
}

describe("resolveRuntime: the one rule for a turn's runtime", () => {
  it("outside a context: the runtime given, else the configured one, else null", () => {
    const { runtime: given } = scriptedRuntime([]);
    expect(resolveRuntime({ runtime: given })).toBe(given);
    expect(resolveRuntime({ runtime: null })).toBeNull();
    expect(resolveRuntime()).toBeNull();
    configureScripted();
    const configured = resolveRuntime();
    expect(configured?.provider.name).toBe("scripted");
    expect(resolveRuntime({ createRuntimeIfNone: false })).toBeNull();
    expect(resolveRuntime({ runtime: null })).toBeNull();
  });

  it("is what sessionContext installs, with and without an enclosing context", async () => {
    configureScripted();
    const installed = await sessionContext({ db: store.db }, (session) => session.runtime);
    expect(installed).not.toBeNull();
    expect(installed).toBe(resolveRuntime());

    const { runtime: outerRuntime } = scriptedRuntime([]);
    await sessionContext({ db: store.db, runtime: outerRuntime }, async () => {
      // Inside a context, the enclosing runtime wins over the configuration; a given one wins over both.
      expect(resolveRuntime()).toBe(outerRuntime);
      const inner = await sessionContext({ db: store.db }, (session) => session.runtime);
      expect(inner).toBe(outerRuntime);
      expect(resolveRuntime({ runtime: null })).toBeNull();
      expect(await sessionContext({ db: store.db, runtime: null }, (session) => session.runtime)).toBeNull();
    });
  });

  it("requireRuntime names what needs the model when there is none", () => {
    expect(() => requireRuntime("the research stages call the model")).toThrow(RuntimeMissingError);
    expect(() => requireRuntime("the research stages call the model")).toThrow(
      /\(the research stages call the model\)/,
    );
    const { runtime } = scriptedRuntime([]);
    expect(requireRuntime("x", { runtime })).toBe(runtime);
    configureScripted();
    expect(requireRuntime("x").provider.name).toBe("scripted");
  });
});

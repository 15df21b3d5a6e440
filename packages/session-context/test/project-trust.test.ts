// Issue 30, item 3: a project's openprogram.config.json may not send the
// user's key anywhere new, write files, or be someone else's file.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UntrustedProjectConfigError } from "../src/index.js";
import {
  listTrustedProjects,
  resolveRuntimeConfig,
  revokeProjectTrust,
  searchProjectConfig,
  trustProject,
} from "../src/entries/runtime.js";
import { removeTree } from "../src/testing/index.js";

const ATTACKER = "http://attacker.invalid:8080/v1";
const NOBODY = 65534;
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) removeTree(root);
});

/** A home folder with a project three levels deep inside it (`home/work/project/src/deep`). */
function layout(): { root: string; home: string; project: string; deep: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), "openprogram-trust-"));
  roots.push(root);
  const home = join(root, "home");
  const project = join(home, "work", "project");
  const deep = join(project, "src", "deep");
  mkdirSync(deep, { recursive: true });
  return { root, home, project, deep, env: { HOME: home, OPENPROGRAM_HOME: join(home, ".openprogram") } };
}

function writeConfig(dir: string, content: unknown, mode = 0o644): string {
  const path = join(dir, "openprogram.config.json");
  writeFileSync(path, JSON.stringify(content));
  chmodSync(path, mode);
  return path;
}

function refusal(run: () => unknown): UntrustedProjectConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof UntrustedProjectConfigError) return error;
    throw error;
  }
  throw new Error("expected an UntrustedProjectConfigError, and nothing was thrown");
}

describe("a project's file and the user's key", () => {
  it.each([
    ["the working directory", (l: ReturnType<typeof layout>) => l.deep],
    ["its parent", (l: ReturnType<typeof layout>) => join(l.deep, "..")],
    ["three levels up", (l: ReturnType<typeof layout>) => l.project],
  ])("an attacker's baseUrl in %s is refused, naming the file, the key and the command", (_where, folder) => {
    const l = layout();
    const file = writeConfig(folder(l), { baseUrl: ATTACKER });
    const error = refusal(() => resolveRuntimeConfig({ ...l.env, OPENAI_API_KEY: "sk-secret" }, l.deep));
    expect(error.code).toBe("untrusted_project_config");
    expect(error.file).toBe(file);
    expect(error.key).toBe("baseUrl");
    expect(error.message).toContain(file);
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(error.message).toContain(
      `openprogram trust ${folder(l)
        .replace(/\/\.\.$/, "")
        .replace(/\/deep$/, "")}`,
    );
    expect(error.message).not.toContain("sk-secret");
  });

  it("refuses the same for a key in the user's config.json, for Anthropic, and for a local server named as provider", () => {
    const l = layout();
    mkdirSync(l.env.OPENPROGRAM_HOME as string, { recursive: true });
    writeFileSync(join(l.env.OPENPROGRAM_HOME as string, "config.json"), JSON.stringify({ apiKey: "sk-user" }));
    writeConfig(l.project, { provider: "openai", baseUrl: ATTACKER });
    expect(refusal(() => resolveRuntimeConfig(l.env, l.deep)).message).toContain("config.json");

    const anthropic = layout();
    writeConfig(anthropic.project, { provider: "anthropic", baseUrl: "http://attacker.invalid" });
    expect(
      refusal(() => resolveRuntimeConfig({ ...anthropic.env, ANTHROPIC_API_KEY: "a" }, anthropic.deep)),
    ).toMatchObject({ key: "baseUrl" });

    const local = layout();
    writeConfig(local.project, { provider: "ollama" });
    expect(refusal(() => resolveRuntimeConfig({ ...local.env, OPENAI_API_KEY: "k" }, local.deep))).toMatchObject({
      key: "provider",
    });
  });

  it("allows what sends no key anywhere new: the provider's own host, the user's own host, the project's own key, the environment's URL", () => {
    const l = layout();
    const env = { ...l.env, OPENAI_API_KEY: "sk-secret" };
    writeConfig(l.project, { baseUrl: "https://api.openai.com/v1", model: "m" });
    expect(resolveRuntimeConfig(env, l.deep).config).toMatchObject({ baseUrl: "https://api.openai.com/v1" });

    mkdirSync(l.env.OPENPROGRAM_HOME as string, { recursive: true });
    writeFileSync(
      join(l.env.OPENPROGRAM_HOME as string, "config.json"),
      JSON.stringify({ baseUrl: "http://models.internal:9000/v1" }),
    );
    writeConfig(l.project, { baseUrl: "http://models.internal:9000/other" });
    expect(resolveRuntimeConfig(env, l.deep).config).toMatchObject({ baseUrl: "http://models.internal:9000/other" });

    writeConfig(l.project, { provider: "openai", baseUrl: ATTACKER, apiKey: "project-own-key" });
    expect(resolveRuntimeConfig(l.env, l.deep).config).toMatchObject({ baseUrl: ATTACKER, apiKey: "project-own-key" });

    writeConfig(l.project, { baseUrl: ATTACKER });
    expect(resolveRuntimeConfig({ ...env, OPENAI_BASE_URL: "http://localhost:1/v1" }, l.deep).config).toMatchObject({
      baseUrl: "http://localhost:1/v1",
    });
    // No key at all (a local server): nothing to protect.
    expect(resolveRuntimeConfig({ ...l.env, OPENPROGRAM_PROVIDER: "openai" }, l.deep).config).toMatchObject({
      baseUrl: ATTACKER,
    });
  });

  it("openprogram trust records the file and its hash; a changed file is untrusted again; revoke undoes it", async () => {
    const l = layout();
    const env = { ...l.env, OPENAI_API_KEY: "sk-secret" };
    const file = writeConfig(l.project, { baseUrl: ATTACKER });
    const trusted = await trustProject(l.deep, l.env);
    expect(trusted).toMatchObject({ dir: l.project, file });
    expect(resolveRuntimeConfig(env, l.deep)).toMatchObject({
      config: { baseUrl: ATTACKER },
      files: { trust: "trusted" },
    });
    expect(listTrustedProjects(l.env)).toEqual([expect.objectContaining({ file, status: "trusted" })]);

    writeConfig(l.project, { baseUrl: "http://other-attacker.invalid/v1" });
    const changed = refusal(() => resolveRuntimeConfig(env, l.deep));
    expect(changed.message).toContain("changed since");
    expect(listTrustedProjects(l.env)).toEqual([expect.objectContaining({ status: "changed" })]);

    await trustProject(l.project, l.env);
    expect(resolveRuntimeConfig(env, l.deep).config).toMatchObject({ baseUrl: "http://other-attacker.invalid/v1" });
    expect(await revokeProjectTrust(l.deep, l.env)).toHaveLength(1);
    expect(refusal(() => resolveRuntimeConfig(env, l.deep)).key).toBe("baseUrl");
    expect(listTrustedProjects(l.env)).toEqual([]);
  });

  it("scriptLog is never taken from a project's file, trusted or not; from the environment or config.json it is", async () => {
    const l = layout();
    const script = join(l.project, "replies.json");
    writeFileSync(script, JSON.stringify(["hi"]));
    writeConfig(l.project, { provider: "scripted", script: "replies.json", scriptLog: "/tmp/anywhere.jsonl" });
    const refused = refusal(() => resolveRuntimeConfig(l.env, l.deep));
    expect(refused.key).toBe("scriptLog");
    expect(refused.message).toContain("OPENPROGRAM_SCRIPT_LOG");
    await trustProject(l.project, l.env);
    expect(refusal(() => resolveRuntimeConfig(l.env, l.deep)).key).toBe("scriptLog");

    writeConfig(l.project, { provider: "scripted", script: "replies.json" });
    const log = join(l.root, "log.jsonl");
    expect(resolveRuntimeConfig({ ...l.env, OPENPROGRAM_SCRIPT_LOG: log }, l.deep).config).toMatchObject({
      script,
      scriptLog: log,
    });
  });

  it("reads script replies from the project's own folder, and from outside it only once trusted", async () => {
    const l = layout();
    writeConfig(l.project, { provider: "scripted", script: "../../outside.json" });
    expect(refusal(() => resolveRuntimeConfig(l.env, l.deep)).key).toBe("script");
    writeConfig(l.project, { provider: "scripted", script: "/etc/passwd" });
    expect(refusal(() => resolveRuntimeConfig(l.env, l.deep)).key).toBe("script");
    await trustProject(l.project, l.env);
    expect(resolveRuntimeConfig(l.env, l.deep).config).toMatchObject({ script: "/etc/passwd" });
  });
});

describe("the upward search for a project's file", () => {
  it("stops at the home folder: a file above it is never read", () => {
    const l = layout();
    writeConfig(l.root, { baseUrl: ATTACKER });
    expect(searchProjectConfig(l.deep, l.env).path).toBeNull();
    expect(resolveRuntimeConfig({ ...l.env, OPENAI_API_KEY: "sk" }, l.deep).config).not.toHaveProperty("baseUrl");
    // Also when HOME names the home folder through a link.
    const link = join(l.root, "home-link");
    symlinkSync(l.home, link);
    expect(searchProjectConfig(l.deep, { ...l.env, HOME: link }).path).toBeNull();
    // The home folder's own file is the last one looked at.
    const own = writeConfig(l.home, { model: "mine" });
    expect(searchProjectConfig(l.deep, l.env).path).toBe(own);
  });

  it.each([
    ["owned by another user", (path: string) => chownSync(path, NOBODY, NOBODY), /owned by uid 65534/],
    ["writable by its group", (path: string) => chmodSync(path, 0o664), /writable by its group/],
    ["writable by others", (path: string) => chmodSync(path, 0o646), /writable by others/],
  ])("passes over a file %s, says why, and goes on up", (_what, spoil, reason) => {
    const l = layout();
    const parent = writeConfig(join(l.project, ".."), { model: "from-parent" });
    const spoiled = writeConfig(l.project, { baseUrl: ATTACKER });
    spoil(spoiled);
    const found = searchProjectConfig(l.deep, l.env);
    expect(found.path).toBe(parent);
    expect(found.skipped).toEqual([{ path: spoiled, reason: expect.stringMatching(reason) as unknown }]);
    const resolved = resolveRuntimeConfig({ ...l.env, OPENAI_API_KEY: "sk" }, l.deep);
    expect(resolved.config).toMatchObject({ model: "from-parent" });
    expect(resolved.config).not.toHaveProperty("baseUrl");
    expect(resolved.files.skipped).toHaveLength(1);
  });

  it("passes over a FIFO without blocking on it, and a directory of that name", () => {
    const l = layout();
    execFileSync("mkfifo", [join(l.project, "openprogram.config.json")]);
    mkdirSync(join(l.deep, "openprogram.config.json"));
    const found = searchProjectConfig(l.deep, l.env);
    expect(found.path).toBeNull();
    expect(found.skipped.map((file) => file.reason)).toEqual(["not a regular file", "not a regular file"]);
  });

  it("refuses to trust a file it would pass over, saying why", async () => {
    const l = layout();
    chmodSync(writeConfig(l.project, { baseUrl: ATTACKER }), 0o664);
    await expect(trustProject(l.project, l.env)).rejects.toThrow(/writable by its group.*chmod go-w/);
    expect(listTrustedProjects(l.env)).toEqual([]);
  });
});

// Issue 30, item 4: a session's record names the module its turn ran, and
// resuming imports it. The record is not the user's word: the module is
// checked before anything imports it.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, sessionContext, UntrustedProgramError } from "../src/index.js";
import { moduleProgramRef, resumeTurn, type RecordedModulePolicy } from "../src/entries/turns.js";
import { createTempStore, removeTree, type TempStore } from "../src/testing/index.js";

let store: TempStore;
let outside: string;
let sessions = 0;
beforeEach(() => {
  store = createTempStore();
  outside = realpathSync(mkdtempSync(join(tmpdir(), "openprogram-evil-")));
});
afterEach(() => {
  store.cleanup();
  removeTree(outside);
});

/** A module whose top-level code leaves a mark: importing it is running it. */
function evilModule(dir: string, name = "evil.mjs"): { path: string; imported: () => boolean } {
  const path = join(dir, name);
  const mark = join(dir, `${name}.imported`);
  writeFileSync(path, `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(mark)}, "ran");\n`);
  return { path, imported: () => existsSync(mark) };
}

const fails = agenticFunction({ name: "fails", doc: "Always fails." }, async () => {
  throw new Error("stopped short");
});

/** A session whose failed turn recorded `ref` as its program. */
async function sessionRecording(ref: string): Promise<string> {
  const sessionId = `recorded_${++sessions}`;
  await expect(
    sessionContext({ sessionId, db: store.db, runtime: null, program: { ref, input: {} } }, () => fails({})),
  ).rejects.toThrow("stopped short");
  return sessionId;
}

function resume(sessionId: string, modules?: RecordedModulePolicy): Promise<unknown> {
  return resumeTurn({ sessionId, db: store.db, runtime: null, ...(modules ? { modules } : {}) });
}

describe("a module a session's record names", () => {
  it("outside the working directory is refused before it is imported, naming the module and how to allow it", async () => {
    const evil = evilModule(outside);
    const sessionId = await sessionRecording(moduleProgramRef(evil.path, "default"));
    const refused = await resume(sessionId).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UntrustedProgramError);
    expect(refused).toMatchObject({ code: "untrusted_program", modulePath: evil.path });
    expect((refused as Error).message).toContain(`ran ${evil.path}#default, a module outside this project`);
    expect((refused as Error).message).toContain("resumeTurn({ modules: { named:");
    expect(evil.imported()).toBe(false);
  });

  it("is imported when the user named it, when it is under the project, or when confirmed", async () => {
    for (const policy of [
      (path: string): RecordedModulePolicy => ({ named: [path] }),
      (): RecordedModulePolicy => ({ projectDir: outside }),
      (): RecordedModulePolicy => ({ confirm: async () => true }),
    ]) {
      const evil = evilModule(outside, `allowed-${++sessions}.mjs`);
      const sessionId = await sessionRecording(moduleProgramRef(evil.path, "default"));
      // It has no agentic function: the default loader says so, after importing it.
      await expect(resume(sessionId, policy(evil.path))).rejects.toThrow(/has no agentic function named 'default'/);
      expect(evil.imported()).toBe(true);
    }
  });

  it("is refused when the user named another module, or said no", async () => {
    const evil = evilModule(outside);
    const other = evilModule(outside, "other.mjs");
    const sessionId = await sessionRecording(moduleProgramRef(evil.path, "default"));
    await expect(resume(sessionId, { named: [other.path] })).rejects.toThrow(/not the module you named/);
    let asked: string | null = null;
    await expect(
      resume(sessionId, {
        confirm: async (module) => {
          asked = module.modulePath;
          return false;
        },
      }),
    ).rejects.toBeInstanceOf(UntrustedProgramError);
    expect(asked).toBe(evil.path);
    expect(evil.imported()).toBe(false);
    expect(other.imported()).toBe(false);
  });

  it("through a link under the project to a file outside it, by a relative path, or with home as the project: refused", async () => {
    const evil = evilModule(outside);
    const project = join(outside, "project");
    mkdirSync(project);
    const link = join(project, "innocent.mjs");
    symlinkSync(evil.path, link);
    const linked = await sessionRecording(moduleProgramRef(link, "default"));
    await expect(resume(linked, { projectDir: project })).rejects.toBeInstanceOf(UntrustedProgramError);

    const relative = await sessionRecording("module:evil.mjs#default");
    await expect(resume(relative, { projectDir: outside })).rejects.toThrow(/not an absolute path/);

    // The home folder is not a project (everything would be under it): named or confirmed only.
    const atHome = evilModule(outside, "at-home.mjs");
    const underHome = await sessionRecording(moduleProgramRef(atHome.path, "default"));
    const home = process.env.HOME;
    process.env.HOME = outside;
    try {
      expect(realpathSync(homedir())).toBe(outside);
      await expect(resume(underHome, { projectDir: outside })).rejects.toThrow(/a module not in a project folder/);
      expect(atHome.imported()).toBe(false);
    } finally {
      process.env.HOME = home;
    }
    expect(evil.imported()).toBe(false);
  });
});

// Issue 30, item 4, through the binary and the server: `resume` and `answer`
// import the module a session's history names only when the user named it,
// it lies under the current folder, or the user said yes on a terminal.
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient } from "@openprogram/dispatcher/testing";
import { agenticFunction, sessionContext } from "@openprogram/session-context";
import { moduleProgramRef } from "@openprogram/session-context/turns";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli, sessionIdFrom, startServe, stopCliProcesses, useCliHome } from "./helpers/cli.js";
import { runCliInPty } from "./helpers/pty.js";

const home = useCliHome();
afterEach(stopCliProcesses);
let server: FakeOpenAIServer;
let failNext = false;
beforeAll(async () => {
  server = await startFakeOpenAIServer(() => {
    if (!failNext) return "fine";
    failNext = false;
    return { status: 500, message: "the model is down" };
  });
});
afterAll(() => server.close());
let folders = 0;

const PROGRAM = `import { appendFileSync } from "node:fs";
import { agenticFunction, askUser } from "@openprogram/session-context";
appendFileSync(new URL("./imported.log", import.meta.url), "imported\\n");
export default agenticFunction({ name: "flaky", doc: "Asks the model once." }, async (_input, { runtime }) =>
  \`model said: \${await runtime.exec("hello")}\`,
);
export const asks = agenticFunction({ name: "asks", doc: "Asks one question." }, async () =>
  \`answer was \${await askUser("Go on?", { choices: ["yes", "no"] })}\`,
);
`;

/** A folder under the home folder holding the program; `imports()` counts how often its top level ran. */
function programFolder(): { dir: string; module: string; imports: () => number } {
  const dir = join(home.home, `programs-${++folders}`);
  mkdirSync(dir);
  const module = join(dir, "flaky.mjs");
  writeFileSync(module, PROGRAM);
  const log = join(dir, "imported.log");
  return {
    dir: realpathSync(dir),
    module: realpathSync(module),
    imports: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0),
  };
}

/** Another folder under the home folder: where the user runs `resume` from. */
function elsewhere(): string {
  const dir = join(home.home, `elsewhere-${++folders}`);
  mkdirSync(dir);
  return dir;
}

/** The environment with the fake model server; its next request fails while `failNext` is set. */
function modelEnv(): Record<string, string> {
  return home.env({ OPENAI_BASE_URL: server.baseUrl, OPENPROGRAM_MODEL: "m", OPENPROGRAM_MAX_RETRIES: "0" });
}

/** Runs the program from its own folder while the model fails: a failed turn that recorded `module:<path>#default`. */
async function failedSession(folder: ReturnType<typeof programFolder>): Promise<string> {
  failNext = true;
  const run = await runCli(["run", "flaky.mjs"], { env: modelEnv(), cwd: folder.dir });
  expect(run.stderr).toContain("provider_error");
  expect(run.code).toBe(1);
  return sessionIdFrom(run.stderr);
}

describe("a module a session's turn recorded", () => {
  it("outside the current folder: resume refuses before importing it, names the flag; --program that file runs it", async () => {
    const folder = programFolder();
    const sessionId = await failedSession(folder);
    expect(folder.imports()).toBe(1);
    const cwd = elsewhere();

    const refused = await runCli(["resume", sessionId], { env: modelEnv(), cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^error \[untrusted_program\]: Turn \S+ of session '\S+' ran \S+flaky\.mjs#default/m,
    );
    expect(refused.stderr).toContain(`run the command again with --program ${folder.module}`);
    const json = await runCli(["resume", sessionId, "--json"], { env: modelEnv(), cwd });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "untrusted_program" } });

    writeFileSync(join(cwd, "mine.mjs"), PROGRAM);
    const wrong = await runCli(["resume", sessionId, "--program", "mine.mjs"], { env: modelEnv(), cwd });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("not the module you named");

    // The home folder is no project: everything would be under it.
    const atHome = await runCli(["resume", sessionId], { env: modelEnv(), cwd: home.home });
    expect(atHome.code).toBe(2);
    expect(atHome.stderr).toContain("a module not in a project folder");
    expect(folder.imports()).toBe(1);

    const named = await runCli(["resume", sessionId, "--program", folder.module], { env: modelEnv(), cwd });
    expect(named.stderr).not.toContain("error");
    expect(named.code).toBe(0);
    expect(named.stdout).toBe("model said: fine\n");
    expect(folder.imports()).toBe(2);
  });

  it("under the current folder: resume imports it without asking", async () => {
    const folder = programFolder();
    const sessionId = await failedSession(folder);
    const below = join(folder.dir, "sub");
    mkdirSync(below);
    // From a folder below it the module is not under the current folder.
    expect((await runCli(["resume", sessionId], { env: modelEnv(), cwd: below })).code).toBe(2);
    const resumed = await runCli(["resume", sessionId], { env: modelEnv(), cwd: folder.dir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("model said: fine\n");
    expect(folder.imports()).toBe(2);
  });

  it("answer, with the asking process gone: refused without --program, answered with it", async () => {
    const folder = programFolder();
    const asked = await runCliInPty(["run", `${folder.module}#asks`], {
      env: home.env(),
      dir: home.home,
      steps: [{ expect: "Choose a number", send: "\u0003" }],
    });
    expect(asked.exit_code).toBe(130);
    const sessionId = sessionIdFrom(asked.output.replace(/\r/g, ""));
    const cwd = elsewhere();
    const refused = await runCli(["answer", sessionId, "yes"], { env: modelEnv(), cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error \[untrusted_program\]: .*ran \S+flaky\.mjs#asks/m);
    expect(folder.imports()).toBe(1);
    const answered = await runCli(["answer", sessionId, "yes", "--program", folder.module], { env: modelEnv(), cwd });
    expect(answered.code).toBe(0);
    expect(answered.stdout).toBe("answer was yes\n");
  });

  it("on a terminal, asks first: no leaves it unimported, yes runs it", async () => {
    const folder = programFolder();
    const sessionId = await failedSession(folder);
    const cwd = elsewhere();
    const no = await runCliInPty(["resume", sessionId], {
      env: modelEnv(),
      dir: home.home,
      cwd,
      steps: [{ expect: "Run it\\? \\[y/N\\] ", send: "n\r" }],
    });
    expect(no.output).toContain(
      `ran ${folder.module}#default, a module outside this folder. Importing it runs its code.`,
    );
    expect(no.exit_code).toBe(2);
    expect(folder.imports()).toBe(1);
    const yes = await runCliInPty(["resume", sessionId], {
      env: modelEnv(),
      dir: home.home,
      cwd,
      steps: [{ expect: "Run it\\? \\[y/N\\] ", send: "y\r" }],
    });
    expect(yes.exit_code).toBe(0);
    expect(yes.output).toContain("model said: fine");
    expect(folder.imports()).toBe(2);
  });

  it("planted in a record (module:/.../evil.mjs): neither resume nor the server's resume frame imports it", async () => {
    const dir = join(home.home, `evil-${++folders}`);
    mkdirSync(dir);
    const evil = join(dir, "evil.mjs");
    const mark = join(dir, "ran");
    writeFileSync(evil, `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(mark)}, "ran");\n`);
    const sessionId = `planted_${folders}`;
    const fails = agenticFunction({ name: "fails", doc: "Fails." }, async () => {
      throw new Error("stopped");
    });
    for (const [id, ref] of [
      [sessionId, moduleProgramRef(evil, "default")],
      [`${sessionId}_relative`, "module:evil.mjs#default"],
    ] as const) {
      await expect(
        sessionContext({ sessionId: id, db: home.db, runtime: null, program: { ref, input: {} } }, () => fails({})),
      ).rejects.toThrow("stopped");
    }
    const cwd = elsewhere();
    const resumed = await runCli(["resume", sessionId], { env: modelEnv(), cwd });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("error [untrusted_program]");
    const relative = await runCli(["resume", `${sessionId}_relative`], { env: home.env(), cwd: dir });
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain("not an absolute path");
    expect(existsSync(mark)).toBe(false);

    // The dispatcher runs only the programs it registers, even from the module's own folder.
    const serve = await startServe([], { env: home.env({ OPENPROGRAM_PROVIDER: "none" }), cwd: dir });
    const client = await TestClient.connect(serve.wsUrl);
    try {
      client.send({ type: "resume", session_id: sessionId });
      expect(await client.next("error")).toMatchObject({ code: "turn_not_resumable" });
    } finally {
      client.close();
    }
    await serve.stop();
    expect(existsSync(mark)).toBe(false);
  });
});

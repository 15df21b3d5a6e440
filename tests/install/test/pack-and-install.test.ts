// Issues 9, 17 and 37: the root README's "Use it in your own project", step by
// step: `npm run pack:all` writes one tarball per package (its last step,
// scripts/pack-all.mjs, is run here; the bootstrap before it only installs the
// workspace this test already runs in), `npx -p <tarballs> openprogram init
// hello`, `npm install` and `npm start` there, a program that fails, the store
// commands; npx from the tarballs alone; `npm pack` of a package installs with
// plain npm; and the installed binary works outside the repository
// (--version, --help, a .mjs program importing its own install of the core,
// serve on its port). Every install resolves afresh from the registry (no
// lockfile, metadata revalidated), as a user's first install does, so a broken
// upstream release fails here first; and every command must print no warning.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findFreePort, removeTree, waitFor } from "@openprogram/session-context/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Lines of a command's stderr that warn: npm's `npm warn`, Node's `(node:123) [CODE] Warning`, any "deprecated". */
function warningLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => /^npm warn|^npm WARN|^\(node:\d+\)|\bwarning\b|deprecated/i.test(line));
}

/**
 * Runs a command to completion with stdin closed (npm 11 waits on an open
 * stdin); rejects with its output when it exits non-zero, and when it printed a
 * warning (a fresh install is quiet: issue 37).
 */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number; failing?: boolean; allowWarnings?: boolean },
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: options.timeout ?? 120_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const warned = options.allowWarnings ? [] : warningLines(stderr);
      if (code !== 0 && !options.failing)
        reject(new Error(`${command} ${args.join(" ")} exited ${code ?? signal}:\n${stderr}\n${stdout}`));
      else if (warned.length > 0)
        reject(new Error(`${command} ${args.join(" ")} printed warnings:\n${warned.join("\n")}\n\n${stderr}`));
      else resolve({ stdout, stderr, code });
    });
  });
}
const repo = fileURLToPath(new URL("../../../", import.meta.url));
const PACKAGES = ["session-context", "dispatcher", "process-runner", "research", "mcp", "cli"];
const work = mkdtempSync(join(tmpdir(), "openprogram-install-"));
const tarballs = join(work, "tarballs");
const project = join(work, "hello");
const outside = join(work, "elsewhere");
const home = join(work, "home");
const bin = join(project, "node_modules", ".bin", "openprogram");
/**
 * Plain npm and node, with the machine's own settings (certificates, proxies,
 * the npm cache) but none of OpenProgram's: no workspace, no inherited
 * provider, a fresh home.
 */
const env: NodeJS.ProcessEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(OPENPROGRAM_|OPENAI_|ANTHROPIC_|TRACEPARENT$|npm_|PNPM|VITEST)/i.test(name),
    ),
  ),
  HOME: home,
  OPENPROGRAM_HOME: home,
  npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? home, ".npm"),
  npm_config_update_notifier: "false",
  // Fresh resolution: no lockfile, and the registry's metadata revalidated rather than taken from the cache.
  npm_config_prefer_online: "true",
  npm_config_package_lock: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
};

// Several installed node_modules trees: removing them took over 60 s on a machine loaded 25x.
// The hook's timeout only bounds a hang; cleanup must never fail the tests.
afterAll(() => removeTree(work), 600_000);

function tarballOf(name: string): string {
  return join(tarballs, readdirSync(tarballs).find((file) => file.startsWith(`openprogram-${name}-`)) as string);
}

beforeAll(async () => {
  for (const dir of [project, outside, home]) mkdirSync(dir, { recursive: true });
  const packed = await run(process.execPath, [join(repo, "scripts", "pack-all.mjs"), tarballs], {
    cwd: repo,
    env: process.env,
  });
  expect(packed.stdout).toContain(`npm install ${PACKAGES.map(tarballOf).join(" ")}`);
  // As the README says: init from the tarballs with npx (package.json names them), then npm install there.
  const packages = PACKAGES.flatMap((name) => ["-p", tarballOf(name)]);
  const init = await run("npx", ["-y", ...packages, "openprogram", "init", "hello"], {
    cwd: work,
    env,
    timeout: 300_000,
  });
  initOutput = init.stdout;
  await run("npm", ["install"], { cwd: project, env, timeout: 300_000 });
}, 600_000);

let initOutput = "";

describe("packed tarballs", () => {
  it.each(PACKAGES)("%s has a clean manifest, types, a README and a license", async (name) => {
    const { stdout } = await run("tar", ["-xzOf", tarballOf(name), "package/package.json"], { cwd: work });
    expect(stdout).not.toMatch(/workspace:|catalog:/);
    const manifest = JSON.parse(stdout) as {
      engines?: { node?: string };
      license?: string;
      exports?: Record<string, unknown>;
      files?: string[];
    };
    expect(manifest.engines?.node).toBe(">=20");
    expect(manifest.license).toBe("MIT");
    expect(manifest.exports?.["."]).toEqual({ types: "./dist/index.d.ts", import: "./dist/index.js" });
    const { stdout: listing } = await run("tar", ["-tzf", tarballOf(name)], { cwd: work });
    for (const file of ["package/README.md", "package/LICENSE", "package/dist/index.js", "package/dist/index.d.ts"])
      expect(listing.split("\n")).toContain(file);
    expect(listing).not.toMatch(/package\/(src|test|bench)\//);
  });

  it("the core's every `exports` entry (the root, /store, /runtime, ...) imports from an install, with its types", async () => {
    const installed = join(project, "node_modules", "@openprogram", "session-context");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      exports: Record<string, string | { types: string; import: string }>;
    };
    const entries = Object.entries(manifest.exports).filter(([, target]) => typeof target !== "string");
    const specifiers = entries.map(([subpath]) =>
      subpath === "." ? "@openprogram/session-context" : `@openprogram/session-context/${subpath.slice(2)}`,
    );
    expect(specifiers).toEqual(
      expect.arrayContaining(["@openprogram/session-context/store", "@openprogram/session-context/testing"]),
    );
    const script =
      `const counts = {};\n` +
      `for (const specifier of ${JSON.stringify(specifiers)}) counts[specifier] = Object.keys(await import(specifier)).length;\n` +
      `process.stdout.write(JSON.stringify(counts));\n`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project, env });
    const counts = JSON.parse(stdout) as Record<string, number>;
    for (const specifier of specifiers) expect(counts[specifier], specifier).toBeGreaterThan(0);
    for (const [subpath, target] of entries)
      expect(existsSync(join(installed, (target as { types: string }).types)), `${subpath} types`).toBe(true);
  });
});

describe("the README's steps", () => {
  it("init writes a package.json that installs (the tarballs it came from) and says the npx commands", async () => {
    expect(initOutput).toMatch(/^ {2}cd hello\n {2}npm install +#.*\n {2}npm start +#/m);
    expect(initOutput).toMatch(/^ {2}npx openprogram sessions list +#/m);
    expect(initOutput).not.toContain("not on the npm registry");
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies["@openprogram/session-context"]).toBe(`file:${tarballOf("session-context")}`);
    expect(manifest.devDependencies["@openprogram/cli"]).toBe(`file:${tarballOf("cli")}`);
  });

  it("npm start runs the template with its default input; a failing program says where and what to do; all quietly", async () => {
    const answers = join(work, "init-answers.json");
    writeFileSync(answers, JSON.stringify(["experts"]));
    const result = await run("npm", ["start", "--silent", "--", "--answers", answers, "--json"], { cwd: project, env });
    const replies = JSON.parse(readFileSync(join(project, "replies.json"), "utf8")) as unknown[];
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      result: { angle: replies[0], opening: replies.at(-1) },
    });

    writeFileSync(
      join(project, "fails.mts"),
      'import { agenticFunction } from "@openprogram/session-context";\n' +
        "function checkMonth(month: string): void {\n  throw new RangeError(`no trips in ${month}`);\n}\n" +
        'export default agenticFunction({ name: "plan_trip", doc: "Plan." }, async ({ month }: { month: string }) => {\n' +
        "  checkMonth(month);\n  return month;\n});\n",
    );
    const failed = await run("npx", ["openprogram", "run", "fails.mts", "--input", '{"month":"May"}'], {
      cwd: project,
      env,
      failing: true,
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("error [RangeError]: no trips in May\n  at checkMonth (fails.mts:3:9)");
    expect(failed.stderr).toContain("The error came from the program itself: fix it and run it again");
  });

  it("the store commands (list, show, tree, log, export, doctor, prune, gc) print no warning", async () => {
    const listed = await run("npx", ["openprogram", "sessions", "list", "--json"], { cwd: project, env });
    const sessions = JSON.parse(listed.stdout) as Array<{ id: string; title: string }>;
    expect(sessions.map((session) => session.title).sort()).toEqual(
      ['plan_trip(month="May")', "write_opening()"].sort(),
    );
    for (const { id } of sessions)
      for (const command of [
        ["show", id],
        ["tree", id],
        ["log", id],
        ["export", id, "--format", "md"],
      ])
        await run("npx", ["openprogram", "sessions", ...command], { cwd: project, env });
    for (const command of [["doctor"], ["prune", "--dry-run"], ["gc"]])
      await run("npx", ["openprogram", "sessions", ...command], { cwd: project, env });
  });

  it("npx runs the CLI from the tarballs alone, in an empty directory", async () => {
    const empty = join(work, "empty");
    mkdirSync(empty);
    const packages = PACKAGES.flatMap((name) => ["-p", tarballOf(name)]);
    const version = await run("npx", ["-y", ...packages, "openprogram", "-v"], {
      cwd: empty,
      env,
      timeout: 300_000,
    });
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(repo, "packages/cli/package.json"), "utf8")) as { version: string }).version,
    );
  });

  it("npm pack of a package gives plain version ranges for every runtime dependency", async () => {
    const npmPacks = join(work, "npm-packs");
    mkdirSync(npmPacks);
    for (const name of PACKAGES) {
      await run("npm", ["pack", "--pack-destination", npmPacks], {
        cwd: join(repo, "packages", name),
        env,
      });
      const file = join(npmPacks, readdirSync(npmPacks).find((entry) => entry.includes(`-${name}-`)) as string);
      const { stdout } = await run("tar", ["-xzOf", file, "package/package.json"], { cwd: work });
      const manifest = JSON.parse(stdout) as { dependencies?: Record<string, string> };
      for (const [dependency, range] of Object.entries(manifest.dependencies ?? {}))
        expect(range, `${name} → ${dependency}`).toMatch(/^[\^~]\d+\.\d+\.\d+$/);
    }
  });
});

describe("the installed openprogram, outside the repository", () => {
  it("prints its version and its help", async () => {
    const version = await run(bin, ["--version"], { cwd: outside, env });
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(repo, "packages/cli/package.json"), "utf8")) as { version: string }).version,
    );
    const help = await run(bin, ["--help"], { cwd: outside, env });
    for (const command of ["run", "chat", "research", "sessions", "serve"]) expect(help.stdout).toContain(command);
    expect(
      readFileSync(join(project, "node_modules/@openprogram/cli/dist/bin.js"), "utf8").startsWith(
        "#!/usr/bin/env node",
      ),
    ).toBe(true);
  });

  it("runs a .mjs program that imports its own install of the core, in the context the CLI installed", async () => {
    const programDir = join(work, "user-program");
    mkdirSync(programDir);
    writeFileSync(
      join(programDir, "package.json"),
      JSON.stringify({ name: "user-program", private: true, type: "module" }),
    );
    await run("npm", ["install", tarballOf("session-context")], {
      cwd: programDir,
      env,
      timeout: 300_000,
    });
    writeFileSync(
      join(programDir, "hello.mjs"),
      `import { agenticFunction, currentSession } from "@openprogram/session-context";
export const hello = agenticFunction({ name: "hello", doc: "Greet the person warmly, in one line." }, async ({ name }, { runtime }) => ({
  greeting: await runtime.exec(\`Name: \${name}\`),
  session: currentSession().sessionId,
}));
`,
    );
    const script = join(work, "replies.json");
    const log = join(work, "requests.jsonl");
    writeFileSync(script, JSON.stringify(["Hello, Ada!"]));
    const result = await run(bin, ["run", join(programDir, "hello.mjs#hello"), "--input", '{"name":"Ada"}', "--json"], {
      cwd: outside,
      env: { ...env, OPENPROGRAM_PROVIDER: "scripted", OPENPROGRAM_SCRIPT: script, OPENPROGRAM_SCRIPT_LOG: log },
    });
    const output = JSON.parse(result.stdout) as { session_id: string; result: { greeting: string; session: string } };
    // Two copies of the core in one process (the CLI's and the program's), one context.
    expect(output.result).toEqual({ greeting: "Hello, Ada!", session: output.session_id });
    expect((JSON.parse(readFileSync(log, "utf8").trim()) as { messages: unknown[] }).messages[0]).toEqual({
      role: "system",
      content: "Greet the person warmly, in one line.",
    });
    const tree = await run(bin, ["sessions", "tree", output.session_id], { cwd: outside, env });
    expect(tree.stdout).toMatch(/hello[\s\S]*scripted/);
  });

  it("serves: /healthz answers on its port, and SIGTERM exits 0", async () => {
    const port = await findFreePort();
    const server = spawn(bin, ["serve", "--port", String(port)], {
      cwd: outside,
      env: { ...env, OPENPROGRAM_PROVIDER: "none" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    server.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
    try {
      let health: Response | null = null;
      await waitFor(async () => {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
        return health !== null || server.exitCode !== null;
      }, "the installed openprogram serve to answer /healthz");
      expect((health as Response | null)?.status, output).toBe(200);
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<html");
    } finally {
      server.kill("SIGTERM");
    }
    expect(await exited, output).toBe(0);
  });
});

import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree, scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDispatcher, type Dispatcher, type ReadinessReport } from "../src/index.js";
import { closeAll, httpGet, onCleanup, startDispatcher } from "./helpers.js";

afterEach(closeAll);

/** A dispatcher on a sessions root of the test's choosing. */
async function dispatcherOn(
  sessionsRoot: string,
  runtime: ReturnType<typeof scriptedRuntime>["runtime"] | null = null,
): Promise<Dispatcher> {
  const dispatcher = await createDispatcher({ port: 0, sessionsRoot, runtime });
  onCleanup(() => dispatcher.close());
  return dispatcher;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "openprogram-readyz-"));
  onCleanup(() => removeTree(dir));
  return dir;
}

async function readyz(dispatcher: Dispatcher): Promise<{ status: number; report: ReadinessReport }> {
  const answer = await httpGet(`${dispatcher.url}/readyz`);
  expect(answer.headers["content-type"]).toBe("application/json");
  return { status: answer.status, report: JSON.parse(answer.body) as ReadinessReport };
}

/**
 * Makes `dir` read-only for this process. chmod does not stop root, so when
 * the tests run as root the directory is made immutable instead (chattr +i);
 * if neither works the test fails saying why, never skips.
 */
function makeReadOnly(dir: string): () => void {
  chmodSync(dir, 0o500);
  const probe = join(dir, "probe");
  try {
    writeFileSync(probe, "");
  } catch {
    return () => chmodSync(dir, 0o700);
  }
  rmSync(probe);
  try {
    execFileSync("chattr", ["+i", dir], { stdio: "pipe" });
  } catch (error) {
    chmodSync(dir, 0o700);
    throw new Error(
      `Cannot make a directory read-only here: running as root (chmod does not stop root) and chattr +i failed (${(error as Error).message}). ` +
        "Run the tests as a non-root user, or on a file system that supports chattr (ext4, xfs).",
      { cause: error },
    );
  }
  return () => {
    execFileSync("chattr", ["-i", dir]);
    chmodSync(dir, 0o700);
  };
}

describe("GET /healthz", () => {
  it("answers 200 with JSON while the process is up", async () => {
    const served = await startDispatcher({ runtime: null });
    const answer = await httpGet(`${served.dispatcher.url}/healthz`);
    expect(answer.status).toBe(200);
    const health = JSON.parse(answer.body) as { status: string; version: string; uptime_s: number };
    expect(health.status).toBe("ok");
    expect(health.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(health.uptime_s).toBeGreaterThanOrEqual(0);
  });
});

describe("GET /readyz", () => {
  it("is ready with a writable store, git, and a configured runtime", async () => {
    const served = await startDispatcher({ runtime: scriptedRuntime([]).runtime });
    const { status, report } = await readyz(served.dispatcher);
    expect(status).toBe(200);
    expect(report).toMatchObject({ status: "ready", reasons: [] });
    expect(report.checks.store.ok).toBe(true);
    expect(report.checks.git.ok).toBe(true);
    expect(report.checks.git.detail).toMatch(/^git version /);
    expect(report.checks.provider).toMatchObject({ ok: true, detail: "scripted (scripted)" });
  });

  it("is ready when the dispatcher runs without a model on purpose", async () => {
    const served = await startDispatcher({ runtime: null });
    const { status, report } = await readyz(served.dispatcher);
    expect(status).toBe(200);
    expect(report.checks.provider.detail).toContain("none");
  });

  it("answers only the status to a caller without the token; the details (root, git, provider) need it", async () => {
    const token = "readyz-token-0123456789abcdef";
    const served = await startDispatcher({ runtime: scriptedRuntime([]).runtime, token });
    const url = `${served.dispatcher.url}/readyz`;
    for (const [headers, query] of [
      [{}, ""],
      [{ Authorization: "Bearer wrong-token" }, ""],
      [{}, "?token=wrong"],
    ] as const) {
      const answer = await httpGet(`${url}${query}`, headers);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ status: "ready" });
      expect(answer.body).not.toContain(served.store.root);
    }
    for (const [headers, query] of [
      [{ Authorization: `Bearer ${token}` }, ""],
      [{}, `?token=${token}`],
    ] as const) {
      const answer = await httpGet(`${url}${query}`, headers);
      const report = JSON.parse(answer.body) as ReadinessReport;
      expect(report.checks.provider.detail).toBe("scripted (scripted)");
      expect(report.checks.git.detail).toMatch(/^git version /);
    }
  });

  it("without a token, gives details only to a request addressed to a loopback name (not a rebound one)", async () => {
    const served = await startDispatcher({ runtime: null });
    const rebound = await httpGet(`${served.dispatcher.url}/readyz`, {
      Host: `rebind.example:${served.dispatcher.port}`,
    });
    expect(JSON.parse(rebound.body)).toEqual({ status: "ready" });
    const local = await httpGet(`${served.dispatcher.url}/readyz`, { Host: `localhost:${served.dispatcher.port}` });
    expect((JSON.parse(local.body) as ReadinessReport).checks.store.ok).toBe(true);
  });

  it("is not ready (503) when no provider is configured, and ready with OPENPROGRAM_PROVIDER=none", async () => {
    // Stubbed and restored in place: process.env assigned a copy would no longer be the process's environment.
    onCleanup(() => {
      vi.unstubAllEnvs();
    });
    for (const name of [
      "OPENPROGRAM_PROVIDER",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "ANTHROPIC_API_KEY",
      "OPENPROGRAM_SCRIPT",
    ])
      vi.stubEnv(name, undefined);
    const home = tempDir();
    vi.stubEnv("OPENPROGRAM_HOME", home);
    const dispatcher = await createDispatcher({ port: 0, sessionsRoot: join(home, "sessions") });
    onCleanup(() => dispatcher.close());
    const unconfigured = await readyz(dispatcher);
    expect(unconfigured.status).toBe(503);
    expect(unconfigured.report.status).toBe("not_ready");
    expect(unconfigured.report.reasons).toHaveLength(1);
    expect(unconfigured.report.reasons[0]).toContain("OPENPROGRAM_PROVIDER=none");
    vi.stubEnv("OPENPROGRAM_PROVIDER", "none");
    expect((await readyz(dispatcher)).status).toBe(200);
    vi.stubEnv("OPENPROGRAM_PROVIDER", "openai");
    const misconfigured = await readyz(dispatcher);
    expect(misconfigured.status).toBe(503);
    expect(misconfigured.report.reasons[0]).toContain("OPENAI_API_KEY");
  });

  it("is not ready (503) when the sessions root is read-only, and says what to do", async () => {
    const root = join(tempDir(), "sessions");
    mkdirSync(root);
    const dispatcher = await dispatcherOn(root);
    expect((await readyz(dispatcher)).status).toBe(200);
    const restore = makeReadOnly(root);
    onCleanup(restore);
    const { status, report } = await readyz(dispatcher);
    expect(status).toBe(503);
    expect(report.checks.store.ok).toBe(false);
    expect(report.reasons).toHaveLength(1);
    expect(report.reasons[0]).toMatch(/The sessions root .* is not writable \((EACCES|EPERM)/);
    expect(report.reasons[0]).toContain("--sessions-root");
    restore();
    expect((await readyz(dispatcher)).status).toBe(200);
  });

  it("is not ready (503) when the sessions root is a file", async () => {
    const root = join(tempDir(), "sessions");
    writeFileSync(root, "not a directory");
    const dispatcher = await dispatcherOn(root);
    const { status, report } = await readyz(dispatcher);
    expect(status).toBe(503);
    expect(report.reasons[0]).toMatch(/cannot be created \((EEXIST|ENOTDIR): a file is in the way/);
  });

  it("leaves no probe file behind", async () => {
    const root = join(tempDir(), "sessions");
    const dispatcher = await dispatcherOn(root);
    await readyz(dispatcher);
    expect(readdirSync(root)).toEqual([]);
  });
});

describe("the page and other paths", () => {
  it("serves the page with a strict content security policy, and only its own files", async () => {
    const served = await startDispatcher({ runtime: null });
    const base = served.dispatcher.url;
    const page = await httpGet(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(page.body).toContain('<script type="module" src="/app.js">');
    const script = await httpGet(`${base}/app.js`);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect((await httpGet(`${base}/style.css`)).status).toBe(200);
    for (const path of [
      "/package.json",
      "/../package.json",
      "/%2e%2e/package.json",
      "/web/app.js",
      "/src/index.ts",
      "/etc/passwd",
    ]) {
      expect((await httpGet(`${base}${path}`)).status).toBe(404);
    }
    expect((await httpGet(`${base}/ws`)).status).toBe(426);
  });

  it("answers a plain GET /ws with 401 for a missing or wrong token and 426 for the right one (the page's probe)", async () => {
    const token = "probe-token-0123456789abcdef";
    const served = await startDispatcher({ runtime: null, token });
    const base = served.dispatcher.url;
    const missing = await httpGet(`${base}/ws`);
    expect(missing.status).toBe(401);
    const errorOf = (body: string) => (JSON.parse(body) as { error: { code: string; message: string } }).error;
    expect(errorOf(missing.body)).toMatchObject({ code: "unauthorized", message: /requires a token/ });
    const wrong = await httpGet(`${base}/ws`, { Authorization: "Bearer wrong-token" });
    expect(wrong.status).toBe(401);
    expect(errorOf(wrong.body).message).toBe("The token is wrong.");
    expect((await httpGet(`${base}/ws`, { Authorization: `Bearer ${token}` })).status).toBe(426);
    expect((await httpGet(`${base}/ws?token=${token}`)).status).toBe(426);
  });

  it("answers other methods with 405", async () => {
    const served = await startDispatcher({ runtime: null });
    const answer = await fetch(`${served.dispatcher.url}/`, { method: "POST", body: "x" });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET, HEAD");
  });
});

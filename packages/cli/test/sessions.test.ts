import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  createCliHome,
  program,
  PYTHON_SESSIONS_FIXTURE,
  readRequestLog,
  runCli,
  sessionIdFrom,
  type CliHome,
} from "./helpers/cli.js";
import { runCliInPty } from "./helpers/pty.js";

let home: CliHome;
let askSession: string;
beforeAll(async () => {
  // The Python OpenProgram fixtures (chat_shared, research_shared), plus one session written by this CLI.
  home = createCliHome({ from: PYTHON_SESSIONS_FIXTURE });
  const answers = home.file("answers.txt", "1\n");
  const run = await runCli(["run", program("ask-choice.mjs"), "--answers", answers], { env: home.env() });
  expect(run.code).toBe(0);
  askSession = sessionIdFrom(run.stderr);
});
afterAll(() => home.cleanup());

const cli = (...args: string[]): ReturnType<typeof runCli> => runCli(args, { env: home.env() });

describe("openprogram sessions, over the Python OpenProgram fixtures and a CLI session", () => {
  it("list shows every session, most recent first, with status, source and title", async () => {
    const result = await cli("sessions", "list");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID +STATUS +SOURCE +UPDATED \(UTC\) +TITLE \/ PREVIEW$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([askSession, "research_shared", "chat_shared"]);
    expect(lines[3]).toMatch(/^chat_shared +idle +web +2026-11-30 01:00:02 +Weekend plan$/);
    expect(lines[2]).toMatch(/^research_shared +idle +cli +2026-11-30 01:00:03$/);
  });

  it("list --json gives the registry entries", async () => {
    const result = await cli("sessions", "list", "--json");
    expect(result.code).toBe(0);
    const records = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    expect(records.map((record) => record.id)).toEqual([askSession, "research_shared", "chat_shared"]);
    expect(records[2]).toMatchObject({
      id: "chat_shared",
      title: "Weekend plan",
      source: "web",
      status: "idle",
      preview: "Make it cheaper",
      agent_id: "main",
    });
    const limited = JSON.parse((await cli("sessions", "list", "--json", "--limit", "1")).stdout) as unknown[];
    expect(limited).toHaveLength(1);
  });

  it("show prints the meta and the conversation of the Python chat session", async () => {
    const result = await cli("sessions", "show", "chat_shared");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("session chat_shared: Weekend plan\n  status: idle   source: web   agent: main\n");
    expect(result.stdout).toContain("head: a2sha   nodes: 4");
    expect(result.stdout).toContain(
      [
        "conversation (4 messages):",
        "user:",
        "  Plan a short weekend trip",
        "model:",
        "  Here is a plan: ...",
        "user:",
        "  Make it cheaper",
        "model:",
        "  Cheaper plan: ...",
      ].join("\n"),
    );
    const json = JSON.parse((await cli("sessions", "show", "chat_shared", "--json")).stdout) as {
      meta: { head_id: string };
      conversation: Array<{ output: string }>;
    };
    expect(json.meta.head_id).toBe("a2sha");
    expect(json.conversation.map((node) => node.output)).toEqual([
      "Plan a short weekend trip",
      "Here is a plan: ...",
      "Make it cheaper",
      "Cheaper plan: ...",
    ]);
  });

  it("tree nests the Python research session's calls by caller, with status and duration", async () => {
    const result = await cli("sessions", "tree", "research_shared");
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split("\n")).toEqual([
      "call research_agent  [completed]  0.04s  (9abc9d1465e5)",
      "  call design_experiments  [completed]  0.01s  (a30a0140411e)",
      "    model fake-model  [completed]  (a399502a57fa)",
      "  call write_section  [completed]  0.00s  (61cbf91bc460)",
      "    model fake-model  [completed]  (dde96ff5bb3e)",
    ]);
    const json = JSON.parse((await cli("sessions", "tree", "research_shared", "--json")).stdout) as Array<{
      name: string;
      children: Array<{ name: string }>;
    }>;
    expect(json.map((entry) => [entry.name, entry.children.map((child) => child.name)])).toEqual([
      ["research_agent", ["design_experiments", "write_section"]],
    ]);
  });

  it("tree shows the ask_user question and its answer under the call that asked", async () => {
    const result = await cli("sessions", "tree", askSession);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^call pick_colour {2}\[completed\] {2}\d+\.\d\ds {2}\([0-9a-f]{12}\)$/);
    expect(lines[1]).toMatch(
      /^ {2}ask_user "Which colour should the chart use\?" -> "red" {2}\[answered\] {2}\([0-9a-f]{12}\)$/,
    );
  });

  it("log shows the git history of a Python session and of a CLI session", async () => {
    const python = await cli("sessions", "log", "research_shared");
    expect(python.code).toBe(0);
    expect(python.stdout).toMatch(
      /^COMMIT +DATE +MESSAGE\ncccaf83717 +2026-11-30T01:00:03\+00:00 +research turn\n365122017e +\S+ +session init\n$/,
    );
    const ours = JSON.parse((await cli("sessions", "log", askSession, "--json")).stdout) as Array<{
      message: string;
      author: string;
    }>;
    expect(ours.map((entry) => entry.message)).toEqual([
      expect.stringMatching(/^turn turn_[0-9a-f]{10} \(cli\)$/),
      "session init",
    ]);
  });

  it("export gives the whole session as JSON and as Markdown", async () => {
    const json = await cli("sessions", "export", "research_shared");
    expect(json.code).toBe(0);
    const exported = JSON.parse(json.stdout) as {
      session: { id: string };
      meta: { head_id: string };
      nodes: Array<{ id: string; name: string }>;
    };
    expect(exported.session.id).toBe("research_shared");
    expect(exported.nodes.map((node) => node.name)).toEqual([
      "research_agent",
      "design_experiments",
      "fake-model",
      "write_section",
      "fake-model",
    ]);
    const md = await cli("sessions", "export", "chat_shared", "--format", "md");
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/^# Session chat_shared: Weekend plan\n/);
    expect(md.stdout).toContain("Make it cheaper");
  });

  it.each([["show"], ["tree"], ["log"], ["export"], ["rm"]])(
    "`sessions %s` of an unknown session exits 2 naming it",
    async (sub) => {
      const result = await cli("sessions", sub, "no_such_session");
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^error \[session_not_found\]: Session 'no_such_session' does not exist\. Most recent sessions:/m,
      );
      expect(result.stdout).toBe("");
    },
  );

  it("show --calls prints what the model saw: the messages sent (checked against the request's sha256) and the reply", async () => {
    // A home of its own: the rm tests below count this file's sessions.
    const own = createCliHome();
    onTestFinished(() => own.cleanup());
    const { env, log } = own.scripted(["A short summary."]);
    const cli = (...args: string[]): ReturnType<typeof runCli> => runCli(args, { env: own.env() });
    const run = await runCli(["run", `${program("summarize.mjs")}#summarize`, "--input", '{"text": "tides turn"}'], {
      env: own.env(env),
    });
    expect(run.code).toBe(0);
    const sessionId = sessionIdFrom(run.stderr);
    const shown = await cli("sessions", "show", sessionId, "--calls");
    expect(shown.code).toBe(0);
    const sent = readRequestLog(log)[0];
    const section = shown.stdout.slice(shown.stdout.indexOf("model calls (1):"));
    expect(section).toMatch(/^#1 scripted \(scripted\) in summarize: completed, \d/m);
    for (const message of sent?.messages ?? [])
      expect(section).toContain(`  [${message.role}]\n    ${message.content}`);
    expect(section).toContain("  [reply]\n    A short summary.");
    expect(section).toMatch(/sha256 [0-9a-f]{12}…: the messages above are the exact request sent/);
    const json = JSON.parse((await cli("sessions", "show", sessionId, "--calls", "--json")).stdout) as {
      calls: Array<{ messages: unknown; verified: boolean }>;
    };
    expect(json.calls).toEqual([expect.objectContaining({ messages: sent?.messages, verified: true })]);
  });

  it("`sessions show` of an invalid id exits 2 with the id rules", async () => {
    const result = await cli("sessions", "show", "../chat_shared");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error \[invalid_session_id\]: Invalid session id "\.\.\/chat_shared": it contains '\/'/m,
    );
  });

  it("`sessions export --format` other than json|md exits 2", async () => {
    const result = await cli("sessions", "export", "chat_shared", "--format", "html");
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("argument 'html' is invalid. Allowed choices are json, md.");
  });
});

describe("openprogram sessions rm", () => {
  it("without --yes and without a terminal it refuses with exit 2 and deletes nothing", async () => {
    const result = await cli("sessions", "rm", "chat_shared");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error \[invalid_input\]: Refusing to delete session chat_shared without confirmation: there is no terminal to ask on\. Pass --yes/m,
    );
    expect(existsSync(join(home.root, "chat_shared", "meta.json"))).toBe(true);
  });

  it("on a terminal it asks; anything but y keeps the session", async () => {
    const result = await runCliInPty(["sessions", "rm", "chat_shared"], {
      env: home.env(),
      dir: home.home,
      steps: [{ expect: "\\[y/N\\] ", send: "n\r" }],
    });
    expect(result.exit_code).toBe(1);
    expect(result.output).toContain('Delete session chat_shared ("Weekend plan"), 4 nodes? This cannot be undone.');
    expect(result.output).toContain("Kept session chat_shared.");
    expect(existsSync(join(home.root, "chat_shared"))).toBe(true);
  });

  it("on a terminal, y deletes it", async () => {
    const result = await runCliInPty(["sessions", "rm", "chat_shared"], {
      env: home.env(),
      dir: home.home,
      steps: [{ expect: "\\[y/N\\] ", send: "y\r" }],
    });
    expect(result.exit_code).toBe(0);
    expect(result.output).toContain("Deleted session chat_shared");
    expect(existsSync(join(home.root, "chat_shared"))).toBe(false);
    expect(await home.db.getSession("chat_shared")).toBeNull();
  });

  it("--yes deletes without asking; the session is gone from list", async () => {
    const result = await cli("sessions", "rm", "research_shared", "--yes", "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, session_id: "research_shared", deleted: true });
    expect(existsSync(join(home.root, "research_shared"))).toBe(false);
    const list = JSON.parse((await cli("sessions", "list", "--json")).stdout) as Array<{ id: string }>;
    expect(list.map((record) => record.id)).toEqual([askSession]);
  });
});

describe("openprogram sessions in an empty home", () => {
  it("list says there are none (on stderr) and prints nothing on stdout; --json prints []", async () => {
    const empty = createCliHome();
    try {
      const result = await runCli(["sessions", "list"], { env: empty.env() });
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(`No sessions in ${join(empty.home, "sessions")}.`);
      const json = await runCli(["sessions", "list", "--json"], { env: empty.env() });
      expect(JSON.parse(json.stdout)).toEqual([]);
    } finally {
      await empty.cleanup();
    }
  });
});

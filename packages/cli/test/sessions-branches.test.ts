// `openprogram sessions branches|checkout|archive|unarchive|prune|gc` and
// `chat --from`, run as a user would (the built binary in a child process),
// over the sessions Python OpenProgram wrote (branched_shared, archived_shared).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCliHome, readRequestLog, runCli, type CliHome } from "./helpers/cli.js";

const V2_FIXTURE = fileURLToPath(
  new URL("../../session-context/test/fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url),
);

let home: CliHome;
beforeAll(() => {
  home = createCliHome({ from: V2_FIXTURE });
});
afterAll(() => home.cleanup());

const cli = (...args: string[]): ReturnType<typeof runCli> => runCli(args, { env: home.env() });
const metaOf = (sessionId: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(home.root, sessionId, "meta.json"), "utf8")) as Record<string, unknown>;

describe("sessions branches and checkout", () => {
  it("lists the tips newest first with the head's marked, and as JSON", async () => {
    const table = await cli("sessions", "branches", "branched_shared");
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ +TIP +NAME +UPDATED \(UTC\) +LAST TURN$/);
    expect(lines[1]).toMatch(/^ +ba1sha +- +\S+ \S+ +Oslo\.$/);
    expect(lines[2]).toMatch(/^\* +ba1bsha +warmer +\S+ \S+ +Seville\.$/);
    const json = JSON.parse((await cli("sessions", "branches", "branched_shared", "--json")).stdout) as unknown[];
    expect(json).toEqual([
      {
        head_id: "ba1sha",
        name: null,
        created_at: 1796094279.4528494,
        updated_at: 1796094279.4528494,
        archived: false,
        active: false,
        trunk: true,
      },
      {
        head_id: "ba1bsha",
        name: "warmer",
        created_at: 1796094266.166028,
        updated_at: 1796094266.166028,
        archived: false,
        active: true,
        trunk: false,
      },
    ]);
  });

  it("--name names a tip in meta.json branches; checkout moves the head; refusals exit 2 with a typed code", async () => {
    const named = await cli("sessions", "branches", "branched_shared", "--name", "ba1sha", "colder");
    expect(named.code).toBe(0);
    expect(named.stderr).toContain('Named branch ba1sha "colder".');
    expect((metaOf("branched_shared").branches as Record<string, unknown>).ba1sha).toMatchObject({
      name: "colder",
      name_locked: true,
    });
    const moved = await cli("sessions", "checkout", "branched_shared", "ba1sha", "--json");
    expect(moved.code).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({
      ok: true,
      session_id: "branched_shared",
      head_id: "ba1sha",
      previous_head_id: "ba1bsha",
    });
    expect(metaOf("branched_shared").head_id).toBe("ba1sha");
    const unknown = await cli("sessions", "checkout", "branched_shared", "nope", "--json");
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ ok: false, error: { code: "node_not_found" } });
    const notTip = await cli("sessions", "branches", "branched_shared", "--name", "bu0sha", "x");
    expect(notTip.code).toBe(2);
    expect(notTip.stderr).toContain("is not a branch tip");
    expect(metaOf("branched_shared").head_id).toBe("ba1sha");
    // Back where the fixture had it, for the tests below.
    expect((await cli("sessions", "checkout", "branched_shared", "ba1bsha")).code).toBe(0);
  });
});

describe("chat --from: edit and resend", () => {
  it("forks beside the edited message; the next line continues the new branch; the old one stays listed", async () => {
    const { env, log } = home.scripted(["Marrakesh.", "Fez."]);
    const result = await runCli(["chat", "--session", "branched_shared", "--from", "bu1bsha"], {
      env: home.env(env),
      input: "Somewhere hotter\nAnd inland?\n",
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Marrakesh.\nFez.\n");
    expect(readRequestLog(log).map((request) => request.messages.map((message) => message.content))).toEqual([
      ["Suggest a destination", "Lisbon.", "Somewhere hotter"],
      ["Suggest a destination", "Lisbon.", "Somewhere hotter", "Marrakesh.", "And inland?"],
    ]);
    const tips = JSON.parse((await cli("sessions", "branches", "branched_shared", "--json")).stdout) as Array<{
      head_id: string;
      active: boolean;
    }>;
    expect(tips).toHaveLength(3);
    expect(tips.filter((tip) => tip.active)).toHaveLength(1);
    expect(tips.map((tip) => tip.head_id)).toEqual(expect.arrayContaining(["ba1sha", "ba1bsha"]));
    expect(metaOf("branched_shared").head_id).toBe(tips.find((tip) => tip.active)?.head_id);
  });

  it("refuses --from a node that is not there (nothing written) and --from without a session (exit 2)", async () => {
    const { env } = home.scripted(["never"]);
    const before = readFileSync(join(home.root, "branched_shared", "meta.json"), "utf8");
    const missing = await runCli(["chat", "--session", "branched_shared", "--from", "nope"], {
      env: home.env(env),
      input: "x\n",
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Node 'nope' does not exist in session 'branched_shared'");
    expect(readFileSync(join(home.root, "branched_shared", "meta.json"), "utf8")).toBe(before);
    const noSession = await runCli(["chat", "--from", "bu1bsha"], { env: home.env(env), input: "x\n" });
    expect(noSession.code).toBe(2);
    expect(noSession.stderr).toContain("--from edits a message of an existing session");
  });
});

describe("archive, unarchive, list --archived / --all", () => {
  it("hides archived sessions unless asked, as Python lists them", async () => {
    const ids = async (...flags: string[]): Promise<string[]> =>
      (JSON.parse((await cli("sessions", "list", "--json", ...flags)).stdout) as Array<{ id: string }>).map(
        (record) => record.id,
      );
    expect(await ids()).not.toContain("archived_shared");
    expect(await ids("--archived")).toEqual(["archived_shared"]);
    expect(await ids("--all")).toContain("archived_shared");
    expect((await cli("sessions", "unarchive", "archived_shared")).code).toBe(0);
    expect(await ids()).toContain("archived_shared");
    expect(await ids("--archived")).toEqual([]);
    const archived = await cli("sessions", "archive", "archived_shared", "--json");
    expect(JSON.parse(archived.stdout)).toEqual({ ok: true, session_id: "archived_shared", archived: true });
    expect(metaOf("archived_shared").archived).toBe(true);
    expect((await cli("sessions", "archive", "no_such_session")).code).toBe(2);
  });
});

describe("prune and gc", () => {
  it("prune --dry-run lists an old empty session and removes nothing; prune removes it", async () => {
    // An empty shell from a day ago (Python's first rule), made by aging a new session in index.json.
    const { SessionDB } = await import("@openprogram/session-context/store");
    const db = new SessionDB({ root: home.root });
    await db.createSession({ id: "empty_shell" });
    await db.flushRegistry(); // index.json is a coalesced cache: write its queued entry before editing the file
    const indexPath = join(home.root, "index.json");
    const index = JSON.parse(readFileSync(indexPath, "utf8")) as Record<string, Record<string, number>>;
    index.empty_shell = {
      ...index.empty_shell,
      created_at: Date.now() / 1000 - 86_400,
      updated_at: Date.now() / 1000 - 86_400,
    };
    writeFileSync(indexPath, JSON.stringify(index, null, 2));
    const dry = await cli("sessions", "prune", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^empty_shell +empty, over an hour old /m);
    expect(dry.stderr).toMatch(/Would remove 1 of 4 sessions in /);
    expect((await cli("sessions", "show", "empty_shell")).code).toBe(0);
    const done = JSON.parse((await cli("sessions", "prune", "--json")).stdout) as {
      dryRun: boolean;
      removed: Array<{ sessionId: string; reason: string }>;
    };
    expect(done).toMatchObject({ dryRun: false, removed: [{ sessionId: "empty_shell", reason: "empty" }] });
    expect((await cli("sessions", "show", "empty_shell")).code).toBe(2);
  });

  it("gc <id> packs the repository and reports the space saved", async () => {
    const result = await cli("sessions", "gc", "branched_shared", "--json");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      sessions: Array<{ sessionId: string; bytesBefore: number; bytesAfter: number }>;
      bytesSaved: number;
    };
    expect(report.sessions.map((entry) => entry.sessionId)).toEqual(["branched_shared"]);
    expect(report.bytesSaved).toBe(report.sessions[0]!.bytesBefore - report.sessions[0]!.bytesAfter);
    expect(report.sessions[0]!.bytesAfter).toBeLessThan(report.sessions[0]!.bytesBefore);
    const text = await cli("sessions", "gc");
    expect(text.code).toBe(0);
    // The one collected above is one pack now: left alone (gc could only add its own files to it).
    expect(text.stdout).toMatch(
      /^Collected 2 repositories: .* before, .* after, .* saved\.\n1 repository already packed: left as it is\.$/m,
    );
  });
});

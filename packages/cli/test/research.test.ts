import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  CHOOSE_IDEA_QUESTION,
  DESIGN_EXPERIMENTS_DOC,
  PROPOSE_IDEAS_DOC,
  REVIEW_PAPER_DOC,
  REVISE_PAPER_DOC,
  SURVEY_LITERATURE_DOC,
  WRITE_SECTION_DOC,
} from "@openprogram/research";
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type ReceivedRequest,
} from "@openprogram/session-context/testing";
import { readRequestLog, runCli, sessionIdFrom, useCliHome } from "./helpers/cli.js";

/** The research harness's scripted demo replies (canned output matched to each stage by its doc). */
const DEMO_REPLIES = fileURLToPath(new URL("../../research/demo/replies.json", import.meta.url));
const STAGE_DOCS = [
  SURVEY_LITERATURE_DOC,
  PROPOSE_IDEAS_DOC,
  DESIGN_EXPERIMENTS_DOC,
  WRITE_SECTION_DOC,
  REVIEW_PAPER_DOC,
  REVISE_PAPER_DOC,
];

const home = useCliHome();

function demoEnv(): { env: Record<string, string>; log: string } {
  const log = join(home.home, `research-${Date.now()}-${Math.random().toString(16).slice(2)}.jsonl`);
  return { env: home.env({ OPENPROGRAM_SCRIPT: DEMO_REPLIES, OPENPROGRAM_SCRIPT_LOG: log }), log };
}

function sessionDirectories(): string[] {
  return existsSync(home.root)
    ? readdirSync(home.root).filter((entry) => entry !== "index.json" && !entry.startsWith("."))
    : [];
}

describe("openprogram research", () => {
  it("runs every stage with its doc as the system message, prints stage progress on stderr and the artifacts on stdout", async () => {
    const workDir = join(home.home, "paper-1");
    const { env, log } = demoEnv();
    const result = await runCli(["research", "agent reliability", "--work-dir", workDir], { env });
    expect(result.stderr).not.toContain("error [");
    expect(result.code).toBe(0);
    const sessionId = sessionIdFrom(result.stderr);
    expect(sessionId).toMatch(/^research_[0-9a-f]{10}$/);

    const artifacts = result.stdout.trimEnd().split("\n");
    expect(artifacts).toContain(join(workDir, "literature review", "review.md"));
    expect(artifacts).toContain(join(workDir, "paper", "paper.md"));
    for (const artifact of artifacts) expect(existsSync(artifact)).toBe(true);
    expect(readFileSync(join(workDir, "paper", "paper.md"), "utf8")).toContain("[canned demo output]");

    for (const stage of [
      "survey_literature",
      "propose_ideas",
      "choose_idea",
      "design_experiments",
      "write_section",
      "review_paper",
    ]) {
      expect(result.stderr).toMatch(new RegExp(`^ {2}✓ ${stage} {2}completed`, "m"));
    }
    expect(result.stderr).toContain(`status: completed   work dir: ${workDir}`);

    const requests = readRequestLog(log);
    expect(requests.length).toBeGreaterThanOrEqual(11);
    for (const request of requests) {
      const [system, ...rest] = request.messages;
      expect(system?.role).toBe("system");
      expect(STAGE_DOCS).toContain(system?.content);
      // The instructions travel only in the system message, never in the content.
      for (const message of rest) for (const doc of STAGE_DOCS) expect(message.content).not.toContain(doc);
    }
    expect(requests[0]?.messages[0]?.content).toBe(SURVEY_LITERATURE_DOC);

    const record = await home.db.getSession(sessionId);
    expect(record?.source).toBe("cli");
    expect(record?.title).toBe("agent reliability");
    const nodes = await home.db.loadNodes(sessionId);
    const agent = nodes.find((node) => node.name === "research_agent");
    expect(agent?.caller).toBe("");
    expect(agent?.metadata.status).toBe("completed");
    // Stages, not the hidden write_artifact calls between them.
    const stages = nodes
      .filter((node) => node.role === "code" && node.caller === agent?.id && node.name !== "write_artifact")
      .map((node) => node.name);
    expect(stages.slice(0, 4)).toEqual(["survey_literature", "propose_ideas", "choose_idea", "design_experiments"]);
  });

  it("--json gives one object; --session continues the session and its model requests carry the first run", async () => {
    const workDir = join(home.home, "paper-2");
    const first = await runCli(["research", "agent reliability", "--work-dir", workDir, "--json"], {
      env: demoEnv().env,
    });
    expect(first.code).toBe(0);
    const output = JSON.parse(first.stdout) as {
      ok: boolean;
      session_id: string;
      created: boolean;
      turn_id: string;
      status: string;
      work_dir: string;
      artifacts: string[];
      summary: string;
    };
    expect(output).toMatchObject({ ok: true, created: true, status: "completed", work_dir: workDir });
    expect(output.artifacts.length).toBeGreaterThanOrEqual(10);
    expect(output.summary).toContain("completed");

    const { env, log } = demoEnv();
    const second = await runCli(
      ["research", "now turn it into a paper", "--session", output.session_id, "--work-dir", workDir, "--json"],
      { env },
    );
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ ok: true, session_id: output.session_id, created: false });
    const survey = readRequestLog(log)[0];
    expect(survey?.messages[0]?.content).toBe(SURVEY_LITERATURE_DOC);
    // The first run (its task and what it produced) is history the second run's first request carries.
    const history = JSON.stringify(survey?.messages.slice(1, -1));
    expect(history).toContain("agent reliability");
    expect(history).toContain("[canned demo output]");
    expect(await home.db.gitLog(output.session_id)).toHaveLength(3);
  });

  it("--interactive with --answers records the choice as an ask_user node with the ideas as choices", async () => {
    const answers = home.file("choose-2.txt", "2\n");
    const workDir = join(home.home, "paper-3");
    const result = await runCli(
      ["research", "agent reliability", "--interactive", "--answers", answers, "--work-dir", workDir],
      { env: demoEnv().env },
    );
    expect(result.code).toBe(0);
    const nodes = await home.db.loadNodes(sessionIdFrom(result.stderr));
    const question = nodes.find((node) => node.name === "ask_user");
    expect(question?.input).toBe(CHOOSE_IDEA_QUESTION);
    expect(question?.metadata.status).toBe("answered");
    const choices = question?.metadata.choices as string[];
    expect(choices.length).toBeGreaterThanOrEqual(2);
    expect(question?.output).toBe(choices[1]);
    expect(nodes.find((node) => node.id === question?.caller)?.name).toBe("choose_idea");
  });

  it("against a loopback OpenAI-compatible server, each stage's request has its doc as the system message", async () => {
    const replies = JSON.parse(readFileSync(DEMO_REPLIES, "utf8")) as Array<{
      when: { system: string; content?: string };
      reply: string;
    }>;
    const reply = (request: ReceivedRequest): string => {
      const messages = request.json.messages ?? [];
      const system = messages[0]?.content ?? "";
      const last = messages.at(-1)?.content ?? "";
      const entry = replies.find(
        (candidate) =>
          system.includes(candidate.when.system) &&
          (candidate.when.content === undefined || last.includes(candidate.when.content)),
      );
      return entry ? entry.reply : "no reply for this request";
    };
    const server: FakeOpenAIServer = await startFakeOpenAIServer(reply);
    try {
      const env = home.env({ OPENAI_BASE_URL: server.baseUrl, OPENPROGRAM_MAX_RETRIES: "0" });
      const result = await runCli(["research", "agent reliability", "--work-dir", join(home.home, "paper-4")], { env });
      expect(result.stderr).not.toContain("error [");
      expect(result.code).toBe(0);
      const systems = server.requests.map((request) => request.json.messages?.[0]);
      expect(systems.every((system) => system?.role === "system" && STAGE_DOCS.includes(system.content))).toBe(true);
      expect(new Set(systems.map((system) => system?.content))).toEqual(new Set(STAGE_DOCS));
    } finally {
      await server.close();
    }
  });

  it.each([
    {
      name: "an empty task",
      args: (): string[] => ["research", "   "],
      message: /^error \[invalid_input\]: The research task must be a non-empty string/m,
    },
    {
      name: "a work dir that is a file",
      args: (): string[] => {
        const file = join(home.home, "not-a-dir.txt");
        writeFileSync(file, "x");
        return ["research", "a task", "--work-dir", file];
      },
      message: /^error \[invalid_input\]: .*not-a-dir\.txt/m,
    },
    {
      name: "an unknown section",
      args: (): string[] => ["research", "a task", "--sections", "abstract,appendix z"],
      message: /^error \[invalid_input\]: .*appendix z/m,
    },
    {
      name: "--interactive without a terminal or --answers",
      args: (): string[] => ["research", "a task", "--interactive"],
      message: /^error \[invalid_input\]: --interactive asks you to choose an idea, but stdin is not a terminal/m,
    },
    {
      name: "--resume of an unknown session",
      args: (): string[] => ["research", "a task", "--resume", "research_0000000000"],
      message: /^error \[session_not_found\]: Session 'research_0000000000' does not exist/m,
    },
  ])("bad input ($name) exits 2 before any model call or session", async ({ args, message }) => {
    const before = sessionDirectories();
    const { env, log } = demoEnv();
    const result = await runCli(args(), { env, cwd: home.home });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
    expect(readRequestLog(log)).toEqual([]);
    expect(sessionDirectories()).toEqual(before);
  });

  it("with no provider configured it exits 2 naming the variables, before creating anything", async () => {
    const before = sessionDirectories();
    const result = await runCli(["research", "a task", "--work-dir", join(home.home, "paper-5")], { env: home.env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error \[runtime_missing\]: No model provider is configured \(this command calls the model\)\. Set OPENPROGRAM_PROVIDER/m,
    );
    expect(sessionDirectories()).toEqual(before);
  });
});

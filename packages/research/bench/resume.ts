// Durable turns (issue 14): a 12-call research run (survey, ideas, choice,
// plan, six sections, review, revision) stopped at call 10, resumed, beside
// the remaining calls (the sixth section, the review, the revision, with their
// artifact writes) run alone in the same run.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report } from "@openprogram/bench-kit";
import { agenticFunction, sessionContext, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { resumeTurn } from "@openprogram/session-context/turns";
import { createTempStore, startFakeOpenAIServer } from "@openprogram/session-context/testing";
import {
  ArtifactWriter,
  PAPER_FILE,
  RecordedArtifacts,
  researchAgent,
  REVIEW_FILE,
  reviewPaper,
  revisePaper,
  runResearch,
  sectionFile,
  writeSection,
  type ResearchResult,
  type ReviewPaperInput,
  type RevisePaperInput,
  type WriteSectionInput,
} from "../src/index.js";
import { researchModel, sectionOf } from "../test/helpers/research-model.js";

const PACKAGE = "@openprogram/research";
const TASK = "benchmark task";
/** Call 10 of 12: the sixth section's write_section. */
const STOPPED_SECTION = "conclusion";

/** The calls left after the stop, alone: the same three stages and the same ten artifact writes. */
const remainingCalls = agenticFunction(
  // Hidden: the rounds share one session, and no round's prompts should show the rounds before it.
  { name: "remaining_calls", doc: "The last three stages of a research run.", expose: "hidden" },
  async (inputs: {
    workDir: string;
    section: WriteSectionInput;
    review: ReviewPaperInput;
    revision: RevisePaperInput;
  }) => {
    const files = new RecordedArtifacts(new ArtifactWriter(inputs.workDir));
    const draft = await writeSection(inputs.section);
    await files.write(sectionFile(draft.section), contents.sectionDraft);
    await files.write(PAPER_FILE, contents.paperDraft);
    await reviewPaper(inputs.review);
    await files.write(REVIEW_FILE, contents.review);
    const revision = await revisePaper(inputs.revision);
    for (const revised of revision) await files.write(sectionFile(revised.section), contents.revised(revised.section));
    await files.write(PAPER_FILE, contents.paper);
    return revision.length;
  },
);

/** The tail's file contents, read from the resumed run's work dir (so both sides write the same bytes). */
let contents: {
  sectionDraft: string;
  paperDraft: string;
  review: string;
  paper: string;
  revised: (section: string) => string;
};

/** Times resuming a run stopped at call 10 and running calls 10-12 alone, interleaved, against a loopback model server. */
export async function benchResume(): Promise<void> {
  let failing = false;
  const server = await startFakeOpenAIServer(
    researchModel({
      override: (stage, request) =>
        failing && stage === "write_section" && sectionOf(request) === STOPPED_SECTION
          ? { status: 500, message: "stopped at call 10" }
          : undefined,
    }),
  );
  const store = createTempStore("openprogram-bench-resume-");
  const home = mkdtempSync(join(tmpdir(), "openprogram-bench-resume-work-"));
  try {
    const { db } = store;
    const runtime = createRuntime({
      provider: "openai",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    }) as Runtime;
    const rounds = iterations(10);
    const resumes: number[] = [];
    const alone: number[] = [];
    for (let round = -2; round < rounds; round++) {
      const workDir = join(home, `run-${round}`);
      failing = true;
      const stopped = await runResearch(TASK, { db, runtime, workDir }).then(
        () => null,
        (error: unknown) => error as { sessionId?: string },
      );
      failing = false;
      const sessionId = stopped?.sessionId;
      if (sessionId === undefined) throw new Error("the run did not stop at call 10");

      const before = server.requests.length;
      let started = performance.now();
      const result = await resumeTurn<ResearchResult>({ sessionId, db, runtime, program: researchAgent });
      const resumeTime = performance.now() - started;
      if (result.status !== "completed" || server.requests.length - before !== 3)
        throw new Error(`the resume made ${server.requests.length - before} model calls, not 3`);

      // The same three calls with the inputs the resume gave them, and the same writes, in a session of their own.
      const nodes = await db.loadNodes(sessionId);
      const inputOf = (name: string): unknown => nodes.filter((node) => node.name === name).at(-1)?.input;
      const read = (artifact: string): string => readFileSync(join(workDir, ...artifact.split("/")), "utf8");
      contents = {
        sectionDraft: read(`paper/${STOPPED_SECTION}.v1.md`),
        paperDraft: read("paper/paper.v1.md"),
        review: read(REVIEW_FILE),
        paper: read(PAPER_FILE),
        revised: (section) => read(sectionFile(section)),
      };
      started = performance.now();
      // One session for every round (created, and its repository started, in the warm-up rounds), as the resumed
      // run's is: a session's first commit starts its git repository, which the resume does not pay for.
      await sessionContext({ sessionId: "remaining_calls_alone", db, runtime }, () =>
        remainingCalls({
          workDir: join(home, `alone-${round}`),
          section: inputOf("write_section") as WriteSectionInput,
          review: inputOf("review_paper") as ReviewPaperInput,
          revision: inputOf("revise_paper") as RevisePaperInput,
        }),
      );
      const aloneTime = performance.now() - started;
      // The first two rounds warm up.
      if (round >= 0) {
        resumes.push(resumeTime);
        alone.push(aloneTime);
      }
    }
    const resumed = median(resumes);
    const baseline = median(alone);
    report({
      package: PACKAGE,
      metric:
        "resume a 12-call research run stopped at call 10 (its model request failed), to the end: 9 calls replayed, 3 run",
      unit: "ms",
      median: resumed,
      baseline,
      baselineLabel: "calls 10-12 with their 10 artifact writes, alone in a turn",
      target: "<= 1.2x baseline",
      met: resumed <= 1.2 * baseline,
      samples: rounds,
    });
  } finally {
    await server.close();
    store.cleanup();
    rmSync(home, { recursive: true, force: true });
  }
}

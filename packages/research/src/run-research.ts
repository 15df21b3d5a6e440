import {
  AskUserUnavailableError,
  currentAsker,
  currentSession,
  hasSessionContext,
  sessionContext,
  type Asker,
  type Runtime,
  type SessionDB,
  type SessionEventSink,
} from "@openprogram/session-context";
import { requireRuntime } from "@openprogram/session-context/runtime";
import { RESEARCH_PROGRAM_REF } from "@openprogram/session-context/turns";
import { join } from "node:path";
import { researchAgent } from "./research-agent.js";
import { CHOOSE_IDEA_QUESTION } from "./stages/choose-idea.js";
import type { ResearchInput, ResearchResult } from "./types.js";
import { validateResearchRequest } from "./validate-request.js";
import { resolveWorkDir } from "./work-dir.js";

/** Options of runResearch. */
export interface RunResearchOptions {
  /** Continue (or create) this session; the model sees its earlier runs. Absent: a new `research_…` session, or the enclosing context's. */
  sessionId?: string;
  /** Where artifacts go; default `./research/<sessionId>`. */
  workDir?: string;
  /** Ask which idea to pursue (needs an asker here or in the enclosing context). */
  interactive?: boolean;
  sections?: string[];
  /** The session store; default the enclosing context's, else `$OPENPROGRAM_HOME/sessions`. */
  db?: SessionDB;
  /** The model; default the enclosing context's, else one created from configuration. */
  runtime?: Runtime | null;
  asker?: Asker | null;
  signal?: AbortSignal;
  onEvent?: SessionEventSink;
}

/** What runResearch resolves to. */
export interface RunResearchResult {
  sessionId: string;
  /** True when this run created the session. */
  created: boolean;
  /** The absolute work dir. */
  workDir: string;
  /** Absolute paths of the artifacts this run wrote. */
  artifacts: string[];
  summary: string;
  status: ResearchResult["status"];
  /** research_agent's full result (artifact names relative to workDir). */
  result: ResearchResult;
}

/**
 * Runs the research pipeline from code: validates the request (no model call,
 * no session on bad input), installs `sessionContext` with the `research` id
 * prefix (joining the enclosing turn when already inside a context on the same
 * session), and calls researchAgent.
 */
export async function runResearch(task: string, options: RunResearchOptions = {}): Promise<RunResearchResult> {
  validateResearchRequest(task, options);
  const outer = hasSessionContext();
  const runtime = requireRuntime("the research stages call the model", { runtime: options.runtime });
  const asker = options.asker !== undefined ? options.asker : outer ? currentAsker() : null;
  if (options.interactive && asker === null) throw new AskUserUnavailableError(CHOOSE_IDEA_QUESTION);
  // Inside a context, no id means "this session": the entry that installed it decided the boundary.
  const sessionId = options.sessionId ?? (outer && options.db === undefined ? currentSession().sessionId : undefined);

  const { db, signal, onEvent } = options;
  const context = {
    sessionId,
    idPrefix: "research",
    source: "research",
    // Recorded on the run's turn: `openprogram resume` (or resumeTurn with researchAgent) continues a failed run.
    program: { ref: RESEARCH_PROGRAM_REF },
    title: task.trim().slice(0, 80),
    runtime,
    db,
    asker: options.asker,
    signal,
    onEvent,
  };
  return sessionContext(context, async (session) => {
    const workDir = resolveWorkDir(options.workDir, session.sessionId);
    const input: ResearchInput = { task, workDir };
    // Always recorded, so the call's input is the same whichever entry left the option out.
    input.interactive = options.interactive === true;
    if (options.sections !== undefined) input.sections = options.sections;
    let result: ResearchResult;
    try {
      result = await researchAgent(input);
    } catch (error) {
      throw withRunLocation(error, session.sessionId, workDir);
    }
    return {
      sessionId: session.sessionId,
      created: session.created,
      workDir,
      artifacts: result.artifacts.map((artifact) => join(workDir, ...artifact.split("/"))),
      summary: result.summary,
      status: result.status,
      result,
    };
  });
}

/**
 * A failed run still has a session and a work dir, and the caller needs the id
 * to run again (`sessionId` option): the error gets `sessionId` and `workDir`
 * properties, unless it already has its own.
 */
function withRunLocation(error: unknown, sessionId: string, workDir: string): unknown {
  if (error instanceof Error && Object.isExtensible(error)) {
    for (const [key, value] of Object.entries({ sessionId, workDir })) {
      if (!(key in error)) Object.defineProperty(error, key, { value, enumerable: false, configurable: true });
    }
  }
  return error;
}

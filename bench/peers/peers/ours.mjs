// OpenProgram (this project): sessionContext + agenticFunction + runtime.exec
// over the git store. One durability: every reply is durable (the write-ahead log fdatasynced) before the
// call goes on, and the turn's end is durable before sessionContext returns (its git commit, like git's own, is not fsynced).
import { isAbsolute } from "node:path";
import { core } from "../lib/workspace.mjs";

/**
 * This project's variant (its store has no weaker setting), and two opt-in ones, named with --peers only: a bound
 * without the turn's git commit (what the commit costs, in the same run) and another build of the core (an A/B).
 */
export function oursVariants() {
  return [
    {
      id: "openprogram",
      peer: "OpenProgram (git store)",
      durability: "equal",
      setting:
        "the store's only mode: each reply durable in the session's write-ahead log before the next step, one git commit per turn",
      open: openOurs,
    },
    {
      id: "openprogram-no-commit",
      peer: "ours without the turn's git commit (a bound, not a product)",
      durability: "equal, no commit",
      setting:
        "ours with the store's commit step replaced by the bench (no git commit, no log checkpoint at a turn's end): what the commit costs",
      optIn: true,
      resumes: false,
      open: (options) => openOurs({ ...options, commit: false }),
    },
    {
      id: "openprogram-alt",
      peer: "ours from another build (PEER_BENCH_ALT_DIST), for an A/B of two builds in one run",
      durability: "equal",
      setting: "as openprogram, with the core loaded from PEER_BENCH_ALT_DIST",
      optIn: true,
      resumes: false,
      open: (options) => openOurs({ ...options, dist: altDist() }),
    },
  ];
}

/** The other build the openprogram-alt variant runs: a checkout's built `packages/session-context/dist`. */
function altDist() {
  const dist = process.env.PEER_BENCH_ALT_DIST;
  if (!dist || !isAbsolute(dist))
    throw new Error(
      "openprogram-alt needs PEER_BENCH_ALT_DIST: the absolute path of another checkout's built packages/session-context/dist",
    );
  return dist;
}

async function openOurs({ baseUrl, dir, commit = true, dist }) {
  process.env.OPENPROGRAM_HOME ??= dir;
  const { SessionDB, createRuntime, sessionContext, resumeTurn } = await core(dist);
  // Another build gets its own instance of the program module, bound to that build's agenticFunction.
  const program = dist ? `./ours-program.mjs?dist=${encodeURIComponent(dist)}` : "./ours-program.mjs";
  const { agentTurn, AGENT_TURN_REF, agentToolTurn, AGENT_TOOL_TURN_REF } = await import(program);
  const db = new SessionDB({ root: dir });
  if (!commit) skipTurnCommits(db);
  const runtime = createRuntime({ provider: "openai", baseUrl, apiKey: "bench", model: "fake-model" });
  return {
    async runTurn(session, turn) {
      const input = { session, turn };
      return sessionContext(
        { sessionId: session, db, runtime, source: "bench", program: { ref: AGENT_TURN_REF, input } },
        () => agentTurn(input),
      );
    },
    /** The tool turn: per step one exec with the tool (a tool loop of two model calls and one code node). */
    async runToolTurn(session, turn) {
      const input = { session, turn };
      return sessionContext(
        { sessionId: `${session}-tools`, db, runtime, source: "bench", program: { ref: AGENT_TOOL_TURN_REF, input } },
        () => agentToolTurn(input),
      );
    },
    resume: (session) => resumeTurn({ sessionId: session, db, runtime, source: "bench" }),
    async close() {},
  };
}

/**
 * The no-commit bound: the store's commit step (its TurnCommit, an internal the bench reaches into) answers at once.
 * Checked, so that a rename of the internal fails here instead of measuring ours twice.
 */
function skipTurnCommits(db) {
  const step = db.commit;
  if (typeof step?.commitTurn !== "function")
    throw new Error(
      "openprogram-no-commit expects the store's TurnCommit at db.commit; update bench/peers/peers/ours.mjs",
    );
  step.commitTurn = async () => null;
}

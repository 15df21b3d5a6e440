import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agenticFunction } from "../agentic/agentic-function.js";
import { sessionContext } from "../context/session-context.js";
import type { Runtime } from "../runtime/types.js";
import { reportStoreProblem } from "../store/registry.js";
import { SessionDB } from "../store/session-db.js";

/** The summariser's instructions: the system message of every summary request. */
export const SUMMARIZE_CONVERSATION_DOC = `You compress the earlier part of a conversation between a user and an AI assistant into a summary that replaces it: the assistant will continue the conversation from your summary and the most recent messages, and will not see the messages you summarise again.

Write in plain prose and short lists, in the conversation's language, and keep:
- what the user wants: goals, requests, constraints and preferences, in their own words where it matters;
- what has been done and decided, with the reasons given;
- facts the rest of the conversation may need: names, numbers, file paths, identifiers, code, error messages, exactly;
- what is open: unanswered questions and next steps.

When a previous summary is given, it summarises what came before these messages: keep everything in it that still holds and fold the new messages in, so that the one summary you write covers both.

Write only the summary: no preamble, no closing remarks.`;

/** The input of `summarizeConversation`. */
export interface SummarizeInput {
  /** The messages to summarise, as a transcript ("User: ..." / "Assistant: ..."). */
  transcript: string;
  /** The summary the transcript continues from (a re-compaction), or null. */
  previousSummary: string | null;
}

/**
 * The agentic function that writes a compaction summary: its doc holds the
 * instructions, its request holds the previous summary (if any) and the
 * transcript to fold in.
 */
export const summarizeConversation = agenticFunction(
  // Hidden: each piece's request holds the summary so far, never the earlier pieces' calls.
  { name: "summarize_conversation", doc: SUMMARIZE_CONVERSATION_DOC, expose: "hidden" },
  async (input: SummarizeInput, { runtime }) => runtime.exec(summaryRequest(input), summaryOptions.get(runtime)),
);

/** The request content for one summary. */
export function summaryRequest(input: SummarizeInput): string {
  const previous = input.previousSummary ? `<previous-summary>\n${input.previousSummary}\n</previous-summary>\n\n` : "";
  return `${previous}<conversation>\n${input.transcript}\n</conversation>\n\nWrite the summary.`;
}

/** Per-runtime request options (the summary's output budget), set for the duration of one compaction. */
const summaryOptions = new WeakMap<Runtime, { maxTokens?: number }>();

/**
 * Runs `summarizeConversation` over transcript pieces, each folded into the
 * summary so far (a piece is sized to fit the model's window), and returns
 * the final summary text.
 *
 * The summariser's own call and request are recorded in a scratch session
 * of a temporary store, removed afterwards: compaction adds exactly one node
 * to the compacted session, as Python OpenProgram's does.
 */
export async function writeSummary(options: {
  runtime: Runtime;
  pieces: readonly string[];
  previousSummary: string | null;
  maxTokens?: number;
  signal?: AbortSignal;
}): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-summary-"));
  const db = new SessionDB({ root: join(home, "sessions") });
  try {
    summaryOptions.set(options.runtime, options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens });
    return await sessionContext(
      {
        db,
        runtime: options.runtime,
        source: "compaction",
        fromEnvironment: false,
        onEvent: () => undefined,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      async () => {
        let summary = options.previousSummary;
        for (const transcript of options.pieces) {
          summary = (await summarizeConversation({ transcript, previousSummary: summary })).trim();
        }
        return summary ?? "";
      },
    );
  } finally {
    summaryOptions.delete(options.runtime);
    // The scratch store's index.json is a coalesced cache written a moment after the turn: written before the
    // folder goes, or it lands in (and fails) the removal.
    await db.flushRegistry().catch(() => undefined);
    removeScratchStore(home);
  }
}

/**
 * Removes the summariser's scratch store. The summary is written by then: a folder that cannot go (a late write into
 * it) must not fail the compaction, so it is said once as a warning and left in the temp directory.
 */
function removeScratchStore(home: string): void {
  try {
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  } catch (error) {
    reportStoreProblem(
      `The summariser's scratch store ${home} could not be removed (${(error as Error).message}); it holds nothing the session needs.`,
    );
  }
}

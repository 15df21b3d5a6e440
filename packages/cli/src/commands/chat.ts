import { createInterface } from "node:readline";
import { chat, InvalidInputError, type Runtime, type Tool } from "@openprogram/session-context";
import { requireRuntime } from "@openprogram/session-context/runtime";
import { titleFromMessage } from "@openprogram/session-context/store";
import { budgetsOption, type BudgetFlags } from "../budget-flags.js";
import { chatAsker } from "../chat-asker.js";
import { loadMcp, type McpModule } from "../contracts.js";
import { interruptTurnsOnSignals } from "../cancellation.js";
import type { CommandContext } from "../command-context.js";
import { EXIT_CODES, isConfigurationError } from "../exit-codes.js";
import { isTerminal } from "../io.js";
import { formatError, sessionLine, summarizeError, writeJson, writeLine } from "../output.js";
import { createEventLines } from "../event-lines.js";
import { createReplyPrinter } from "../reply-printer.js";
import { createCompactionLines } from "../compaction-lines.js";
import { createToolLines } from "../tool-lines.js";
import { createRetryLines } from "../retry-lines.js";
import { combineSinks } from "../progress.js";
import { reportFailure } from "../report.js";
import { runTurn } from "../run-turn.js";
import { selectSession, type SessionFlags } from "../session-selection.js";

/** Flags of `openprogram chat`. */
export interface ChatFlags extends SessionFlags, BudgetFlags {
  /** A system message for every turn. */
  system?: string;
  /** Edit and resend: the first line forks beside this past message (needs --session or --resume). */
  from?: string;
  /** One JSON object per turn on stdout. */
  json?: boolean;
  /** Every event of each turn as a JSON line on stdout, then the turn's --json line. */
  events?: boolean;
  /** MCP servers (from mcpServers) whose tools every turn offers the model. */
  mcp?: string[];
  /** Answer questions (tool approvals) from this file, in order. */
  answers?: string;
}

/** The --json line of one chat turn. */
export interface ChatJsonTurn {
  ok: boolean;
  session_id: string;
  created: boolean;
  turn_id: string;
  reply?: string;
  error?: { code: string; name: string; message: string };
}

const EXIT_WORDS = new Set(["/exit", "/quit"]);

/**
 * `openprogram chat`: a conversation with the configured model. Each input
 * line is one turn, `sessionContext({ sessionId, source: "cli" }, () => chat(line))`,
 * exactly what the web's chat frame runs; the first turn without an id
 * creates the session and prints its id. `/exit` or end of input leaves.
 * Ctrl-C cancels a running turn (recorded cancelled); at the prompt it leaves with 130.
 * SIGTERM cancels the running turn and leaves with 143.
 */
export async function chatCommand(flags: ChatFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  const json = flags.json === true || flags.events === true;
  let sessionId: string | undefined;
  let runtime: Runtime;
  const tools: Tool[] = [];
  let mcp: McpModule | null = null;
  let budgets: ReturnType<typeof budgetsOption>;
  try {
    budgets = budgetsOption(flags, io);
    sessionId = await selectSession(flags);
    if (flags.from !== undefined && sessionId === undefined)
      throw new InvalidInputError("--from edits a message of an existing session; pass --session or --resume too.");
    runtime = requireRuntime("this command calls the model");
    if (flags.mcp !== undefined && flags.mcp.length > 0) {
      mcp = await loadMcp();
      // Started now, once: a server that cannot start stops the chat before the first message.
      for (const name of flags.mcp) tools.push(...(await mcp.mcpTools(name, { env: io.env, cwd: io.cwd })));
    }
  } catch (error) {
    await mcp?.closeMcpServers();
    return reportFailure(context, error, { json, during: "setup" });
  }
  const interactive = isTerminal(io.stdin) && isTerminal(io.stderr);
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: interactive, prompt: "you> " });
  const asker = tools.length > 0 ? chatAsker(io, rl, interactive, flags.answers) : undefined;
  if (sessionId !== undefined) writeLine(io.stderr, sessionLine(sessionId));
  if (interactive) writeLine(io.stderr, "Type a message and press Enter; /exit or Ctrl-D leaves.");

  let failedTurns = 0;
  // Edit and resend applies to the first line; later lines continue the new branch (the head moved there).
  let editFrom = flags.from;
  // A signal at the prompt leaves the chat; during a turn it cancels that turn (SIGTERM then leaves too).
  let leaving = false;
  const interruption = interruptTurnsOnSignals(io, () => {
    leaving = true;
    rl.close();
  });
  // On a terminal readline reads Ctrl-C as a key and reports it here, not as a process signal.
  const onTerminalInterrupt = (): void => interruption.interrupt("SIGINT");
  rl.on("SIGINT", onTerminalInterrupt);
  try {
    if (interactive) rl.prompt();
    for await (const raw of rl) {
      const line = raw.trim();
      if (EXIT_WORDS.has(line)) break;
      if (line !== "") {
        const signal = interruption.beginTurn();
        // The reply streams to stdout as it comes, unless stdout carries JSON.
        const printer = json ? null : createReplyPrinter(io.stdout);
        const onEvent = combineSinks([
          flags.events === true ? createEventLines(io.stdout) : printer?.onEvent,
          createCompactionLines(io.stderr),
          createToolLines(io.stderr),
          createRetryLines(io.stderr),
        ]);
        const outcome = await runTurn(
          {
            ...(sessionId !== undefined ? { sessionId } : {}),
            // Only a session this line creates takes it: the first message titles the session.
            title: titleFromMessage(line),
            runtime,
            signal,
            ...(asker !== undefined ? { asker } : {}),
            ...(onEvent ? { onEvent } : {}),
            ...budgets,
          },
          () =>
            chat(line, {
              ...(flags.system !== undefined ? { system: flags.system } : {}),
              ...(editFrom !== undefined ? { from: editFrom } : {}),
              ...(tools.length > 0 ? { tools } : {}),
            }),
        );
        const edited = editFrom !== undefined;
        editFrom = undefined;
        interruption.endTurn();
        printer?.finish(outcome.ok ? outcome.value : null);
        const cancelled = signal.aborted;
        if (outcome.handle && sessionId === undefined) {
          sessionId = outcome.handle.sessionId;
          writeLine(io.stderr, sessionLine(sessionId));
        }
        if (outcome.ok) {
          if (json) writeJson(io.stdout, chatJson(outcome.handle, { ok: true, reply: outcome.value }));
        } else {
          const code = summarizeError(outcome.error).code;
          // A --from that names no message to edit is a usage error: nothing was written, the chat stops.
          const badEdit = edited && (code === "node_not_found" || code === "node_not_on_branch");
          if (outcome.handle === null || isConfigurationError(code) || badEdit) {
            return reportFailure(context, outcome.error, {
              json,
              during: outcome.handle === null || badEdit ? "setup" : "run",
              handle: outcome.handle,
            });
          }
          if (!cancelled) failedTurns++;
          writeLine(io.stderr, cancelled ? "(turn cancelled)" : formatError(outcome.error, context.verbose));
          if (json) writeJson(io.stdout, chatJson(outcome.handle, { ok: false, error: summarizeError(outcome.error) }));
        }
        if (cancelled && interruption.received === "SIGTERM") {
          // SIGTERM ends the chat once the turn it cancelled is committed.
          leaving = true;
          break;
        }
      }
      if (interactive) rl.prompt();
    }
  } finally {
    rl.off("SIGINT", onTerminalInterrupt);
    interruption.dispose();
    rl.close();
    await mcp?.closeMcpServers();
  }
  if (leaving) return interruption.exitCode() ?? EXIT_CODES.interrupted;
  return failedTurns > 0 ? EXIT_CODES.failed : EXIT_CODES.ok;
}

function chatJson(
  handle: { sessionId: string; created: boolean; turnId: string },
  fields: Pick<ChatJsonTurn, "ok" | "reply" | "error">,
): ChatJsonTurn {
  return { session_id: handle.sessionId, created: handle.created, turn_id: handle.turnId, ...fields };
}

// The commander program: names, flags and help of every command. Each action
// imports its command module only when it runs, so `--help`, `--version` and
// a typo never load the core, tsx, the dispatcher or the provider SDKs.
import { Argument, Command, Option } from "commander";
import { addBudgetOptions } from "./budget-options.js";
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from "./completion.js";
import type { CommandContext, CommandResult } from "./command-context.js";
import { applyEnvironmentFlags, PROVIDER_CHOICES, type EnvironmentFlags } from "./environment-flags.js";
import { addHelpExamples } from "./help-examples.js";
import { traced } from "./trace-export.js";
import { lazyActions } from "./lazy-action.js";
import { collectServers } from "./mcp-turn-tools.js";
import type { CliIo } from "./io.js";
import { addRecordingsCommands } from "./program-recordings.js";
import { addSessionsCommands } from "./program-sessions.js";
import { cliVersion } from "./version.js";

/** Where actions leave their result for main(). */
export interface ResultSlot {
  result: CommandResult;
}

const EXIT_CODES_HELP = `
Exit codes:
  0    success
  1    the program (or a model call) failed; its error is printed as "error [code]: message"
  2    usage or input error: unknown command or option, bad JSON, invalid or unknown session id,
       missing module or export, provider not configured (the message names the variable to set)
  130  interrupted with Ctrl-C: the running turn was cancelled and committed (a second Ctrl-C exits at once)
  141  stdout is a closed pipe (e.g. | head read enough): nothing more is printed
  143  stopped with SIGTERM: the running turn was cancelled and committed
  A failed write to stdout (a full disk, an I/O error) exits 1 with "error [output_failed]".
  75   the session is busy: another process runs or resumes that turn (try again when it is done)

A turn stopped by a crash, Ctrl-C or a failure continues with \`openprogram resume <session>\`;
a question still waiting is answered with \`openprogram answer <session> <value>\`.

Environment:
  OPENPROGRAM_HOME      where sessions live ($OPENPROGRAM_HOME/sessions; default ~/.openprogram)
  OPENPROGRAM_PROVIDER  openai | anthropic | scripted | none | ollama | vllm | lmstudio (inferred when unset)
  OPENPROGRAM_MODEL     model name
  OPENAI_API_KEY, OPENAI_BASE_URL    any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp)
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
  OPENPROGRAM_SCRIPT    scripted replies (a JSON array) for offline runs and tests
  OPENPROGRAM_RECORD, OPENPROGRAM_REPLAY  a JSONL recording of model calls to write, or to answer from offline
  OPENPROGRAM_REPLAY_PACE=1  replay each call's reply at the pace it was recorded
  OPENPROGRAM_MAX_INPUT_BYTES  the most read from --input-file and --answers (default 8388608, 8 MiB)
  A project's openprogram.config.json (nearest from here up to your home folder; files not yours or
  writable by others are passed over) and $OPENPROGRAM_HOME/config.json hold the same settings; the
  environment wins over the project's file, which wins over config.json. A project's file sends your keys
  to a new host only once you trust it (\`openprogram trust\`).`;

const SESSION_HELP = "continue the session with this id, or create it under this id";
const RESUME_HELP = "continue an existing session (exit 2, listing recent sessions, if it does not exist)";
const MCP_RESUME_HELP =
  "offer the tools of this MCP server, as `run --mcp` did (give the turn's servers again, so its record matches); repeat for more";
const PROGRAM_TRUST_HELP =
  "the module the turn ran, when it is outside this folder: you vouch for it (a session's record alone never makes openprogram import a module; on a terminal it asks)";

/** Help that depends on the command line (see run-input-help.ts). */
export interface DynamicHelp {
  /** `run <module> --help`: the input fields of that module's function. */
  runInputHelp?: string | null;
}

/** Builds the `openprogram` program; actions write their exit code into `slot`. */

export function buildProgram(io: CliIo, slot: ResultSlot, dynamic: DynamicHelp = {}): Command {
  const program = new Command("openprogram");
  program
    .description(
      'Run agentic functions, chat, research and manage sessions. Every command that runs code enters sessionContext({ source: "cli" }), exactly as the web does.',
    )
    .version(cliVersion(), "-v, --version", "print the version (-V too)")
    .option("--verbose", "print stacks and causes with errors")
    .option("--env-file <path>", "read variables from this file (Node's .env format); ones already set win")
    .helpOption("-h, --help", "show help")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      outputError: (text, write) => write(text.replace(/^error: /, "error [usage]: ")),
    })
    .showHelpAfterError("(add --help for usage)")
    .addHelpText("after", EXIT_CODES_HELP);

  // --env-file, --provider and --model set the environment before any command runs.
  program.hook("preAction", (_program, action) => {
    try {
      applyEnvironmentFlags(action.optsWithGlobals<EnvironmentFlags>(), io.env, io.cwd);
    } catch (error) {
      action.error(`error [invalid_input]: ${(error as Error).message}`, { exitCode: 2, code: "invalid_input" });
    }
  });
  const recordingOptions = (command: Command): Command =>
    command
      .addOption(
        new Option(
          "--record <file>",
          "write every model call to this JSONL recording (as OPENPROGRAM_RECORD)",
        ).conflicts("replay"),
      )
      .option(
        "--replay <file>",
        "answer every model call from this recording, offline; a changed request fails naming the field (as OPENPROGRAM_REPLAY)",
      )
      .option(
        "--replay-pace",
        "with --replay: deliver each call's reply at the pace it was recorded, not at once (as OPENPROGRAM_REPLAY_PACE=1)",
      );
  const modelOptions = (command: Command): Command =>
    recordingOptions(
      command
        .addOption(
          new Option("--provider <name>", "use this provider (as OPENPROGRAM_PROVIDER, which it overrides)").choices(
            PROVIDER_CHOICES,
          ),
        )
        .option("--model <name>", "use this model (as OPENPROGRAM_MODEL, which it overrides)"),
    );

  const context = (command: Command): CommandContext => ({
    io,
    verbose: command.optsWithGlobals<{ verbose?: boolean }>().verbose === true,
  });
  const lazy = lazyActions(context, async (run) => {
    slot.result = await run;
  });

  program
    .command("init")
    .description("write a small working program (two agentic functions, one asking you) into a directory")
    .argument("[dir]", "where to write it (created if missing; default: here)")
    .addHelpText(
      "after",
      "\nWrites program.mts, replies.json (canned model replies), openprogram.config.json and package.json; never\noverwrites a file. `openprogram run program.mts` then works offline at once, without npm install.",
    )
    .action(lazy(() => import("./commands/init.js").then((loaded) => loaded.initCommand)));

  addBudgetOptions(modelOptions(program.command("run")))
    .description("run an agentic function from a .js/.mjs/.ts/.mts module as one turn of a session")
    .argument(
      "<module>",
      "module file, optionally #export (default: the default export if agentic, else the only agentic export)",
    )
    .addOption(new Option("--input <json>", "the function's input object, as JSON").conflicts("inputFile"))
    .addOption(new Option("--input-file <file>", "read the input object from a JSON file (- for stdin)"))
    .addOption(new Option("--session <id>", SESSION_HELP).conflicts("resume"))
    .option("--resume <id>", RESUME_HELP)
    .option(
      "--answers <file>",
      "answer askUser questions from this file, in order (a JSON array, or one answer per line)",
    )
    .option(
      "--isolate",
      "run the function in a child process (its own process group) through the process runner; it picks the same export as without --isolate",
    )
    .option("--approve-tools", "approve every tool call of this turn (tools declared needsApproval run without asking)")
    .addOption(
      new Option(
        "--mcp <server>",
        "offer the tools of this MCP server (mcpServers in the configuration) in every exec of the turn; repeat for more",
      )
        .argParser(collectServers)
        .conflicts("isolate"),
    )
    .option("--json", 'print one JSON object: {"ok","session_id","created","turn_id","result"} (or "error")')
    .option(
      "--events",
      "print each event (node, delta, status, question, tool_call, tool_result) as a JSON line, then the --json line",
    )
    .addHelpText(
      "after",
      "\nThe result goes to stdout (strings as they are, other values as JSON); `session: <id>` goes to stderr (on entering and at the end).\nWithout a terminal and without --answers, askUser fails with ask_user_unavailable (recorded on its node).\nEach tool call the model makes is a line on stderr: `tool <name> <arguments>  ok|error  <duration>`.\nWith --mcp the servers start before the turn (one that cannot start stops the run, exit 1); a tool not in its entry's\n\"allow\" asks first (on the terminal, from --answers, or not with --approve-tools). Resume such a turn with the same --mcp.\n`openprogram run <module> --help` also lists the fields of its function's input.",
    )
    .addHelpText("after", dynamic.runInputHelp ?? "")
    .action(lazy(traced(() => import("./commands/run.js").then((loaded) => loaded.runCommand))));

  addBudgetOptions(recordingOptions(program.command("resume")))
    .description(
      "continue a session's interrupted, failed or waiting turn where it stopped (recorded calls are not run again)",
    )
    .argument("<session_id>", "the session")
    .option("--turn <id>", "resume this turn (default: the session's latest turn)")
    .option("--answers <file>", "answer the questions it asks from this file, in order")
    .option("--program <module>", PROGRAM_TRUST_HELP)
    .option("--mcp <server>", MCP_RESUME_HELP, collectServers)
    .option(
      "--json",
      'print one JSON object: {"ok","session_id","created","turn_id","resumed_turn_id","result"} (or "error")',
    )
    .addHelpText(
      "after",
      "\nPrints like `run`. The program runs again with its recorded input; every call, model request and question\nthat matches the record gives its recorded result, so only what had not finished runs (and costs) again.",
    )
    .action(lazy(traced(() => import("./commands/resume.js").then((loaded) => loaded.resumeCommand))));

  recordingOptions(program.command("answer"))
    .description("answer the question a session's turn waits for, and continue that turn")
    .argument("<session_id>", "the session")
    .argument("<value>", "the answer (with choices: one of them, or its number)")
    .option("--question <id>", "the question answered (default: the one waiting)")
    .option("--answers <file>", "answer further questions of the turn from this file, in order")
    .option("--program <module>", PROGRAM_TRUST_HELP)
    .option("--mcp <server>", MCP_RESUME_HELP, collectServers)
    .option("--json", "print one JSON object (as resume, or {ok, question_id, answer, delivered_to} when delivered)")
    .addHelpText(
      "after",
      "\nWhen the process that asked still waits (a server, another terminal), the answer goes to it and this command ends.\nOtherwise this command resumes the turn with the answer and runs it to completion, printing like `run`.",
    )
    .action(lazy(traced(() => import("./commands/answer.js").then((loaded) => loaded.answerCommand))));

  addBudgetOptions(modelOptions(program.command("chat")))
    .description("talk with the configured model; each line is one turn of the session (/exit or end of input leaves)")
    .addOption(new Option("--session <id>", SESSION_HELP).conflicts("resume"))
    .option("--resume <id>", RESUME_HELP)
    .option("--system <text>", "a system message for every turn")
    .option("--from <node_id>", "edit and resend: the first line replaces this past message on a new branch")
    .option("--json", 'print one JSON object per turn: {"ok","session_id","created","turn_id","reply"} (or "error")')
    .option("--events", "print each event (node, delta, status, question) as a JSON line, then the turn's --json line")
    .option(
      "--mcp <server>",
      "offer the tools of this MCP server (mcpServers in the configuration) in every turn; repeat for more",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--answers <file>", "answer questions (tool approvals) from this file, in order")
    .action(lazy(traced(() => import("./commands/chat.js").then((loaded) => loaded.chatCommand))));

  modelOptions(program.command("mcp"))
    .description("serve agentic functions as MCP tools over stdin and stdout (for Claude Desktop-style clients)")
    .option(
      "--program <module>",
      "serve this agentic function (<file>[#export]; repeat for more; env OPENPROGRAM_PROGRAMS, comma-separated)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action(lazy(traced(() => import("./commands/mcp.js").then((loaded) => loaded.mcpCommand))));

  addBudgetOptions(modelOptions(program.command("research")))
    .description(
      "run the research harness on a task: literature review, ideas, experiments, paper and review in a work dir",
    )
    .argument("<task>", "what to research, in quotes")
    .addOption(new Option("--session <id>", SESSION_HELP).conflicts("resume"))
    .option("--resume <id>", RESUME_HELP)
    .option("--work-dir <dir>", "where the artifacts go (default ./research/<session id>)")
    .option("--interactive", "ask you to choose the idea (on the terminal, or from --answers)")
    .option("--answers <file>", "answer questions from this file, in order")
    .option(
      "--sections <list>",
      "comma-separated paper sections (repeatable; default: the harness's six sections)",
      collect,
      undefined,
    )
    .option("--json", 'print one JSON object: {"ok","session_id","created","turn_id","work_dir","artifacts","summary"}')
    .addHelpText("after", "\nEach finished stage is printed on stderr; the artifact paths go to stdout.")
    .action(lazy(traced(() => import("./commands/research.js").then((loaded) => loaded.researchCommand))));

  modelOptions(program.command("config"))
    .description("print the model configuration commands use from here, and where each value came from (keys masked)")
    .option("--json", "print {provider, settings: [{name, value, source}], files: {project, user}}")
    .action(lazy(() => import("./commands/config.js").then((loaded) => loaded.configCommand)));

  program
    .command("trust")
    .description(
      "trust the project's openprogram.config.json as it is now: it may then send your API keys to the address it names",
    )
    .argument("[dir]", "the project folder (default: here); the file is the one commands would use from there")
    .option("--list", "list the trusted project files and whether each is unchanged")
    .option("--revoke", "stop trusting the project file of [dir]")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      `
Until you trust it, a project's file cannot send a key from your environment or $OPENPROGRAM_HOME/config.json
to a host your own configuration does not use (its "baseUrl", or a local server as its "provider"), nor read
"script" replies from outside its folder: commands stop with error [untrusted_project_config] naming the file
and the key. Trust is recorded in $OPENPROGRAM_HOME/trusted-projects.json with the file's SHA-256; a changed
file is untrusted again. "scriptLog" (a file to write) is never taken from a project's file, trusted or not.`,
    )
    .action(lazy(() => import("./commands/trust.js").then((loaded) => loaded.trustCommand)));

  addRecordingsCommands(program.command("recordings").description("inspect and check model-call recordings"), lazy);

  addSessionsCommands(program.command("sessions").description("list, inspect, export and delete sessions"), lazy);

  addBudgetOptions(modelOptions(program.command("serve")))
    .description("start the web dispatcher (HTTP + WebSocket) with the research program and your programs")
    .option("--host <host>", "interface to listen on (env OPENPROGRAM_HOST; default 127.0.0.1)")
    .option("--port <port>", "port, 0 for any free one (env OPENPROGRAM_PORT; default 8787)")
    .option(
      "--token <token>",
      "require this bearer token from clients (env OPENPROGRAM_TOKEN; visible in ps, prefer --token-file)",
    )
    .option("--token-file <file>", "read the token from this file (env OPENPROGRAM_TOKEN_FILE)")
    .option(
      "--no-token",
      "run without a token (loopback only; every local user can connect). Default: a token generated once and kept in $OPENPROGRAM_HOME/serve-token",
    )
    .option(
      "--allowed-origin <origin>",
      "allow browser connections from this origin (repeatable; env OPENPROGRAM_ALLOWED_ORIGINS)",
      collect,
      undefined,
    )
    .option(
      "--program <module#export>",
      "also serve this agentic function (repeatable; env OPENPROGRAM_PROGRAMS, comma-separated)",
      collect,
      undefined,
    )
    .option("--isolate", "run each --program in a child process through the process runner")
    .option(
      "--mcp <server>",
      "let the page enable this MCP server's tools (mcpServers in the configuration) for a chat turn; repeat for more",
      collect,
      undefined,
    )
    .option(
      "--grace-ms <ms>",
      "on SIGTERM/SIGINT, wait this long before cancelling running turns (env OPENPROGRAM_SHUTDOWN_GRACE_MS; default 10000)",
    )
    .option("--sessions-root <dir>", "where sessions live (env OPENPROGRAM_HOME/sessions)")
    .option("--max-turns <n>", "turns running at once across the server (env OPENPROGRAM_MAX_TURNS; default 64)")
    .option("--max-connections <n>", "open connections in total (env OPENPROGRAM_MAX_CONNECTIONS; default 512)")
    .option(
      "--max-connections-per-address <n>",
      "open connections from one address (env OPENPROGRAM_MAX_CONNECTIONS_PER_ADDRESS; default 64)",
    )
    .option(
      "--headers-timeout-ms <ms>",
      "time a client has to send request headers (env OPENPROGRAM_HEADERS_TIMEOUT_MS; default 10000)",
    )
    .option(
      "--unauthenticated-headers-timeout-ms <ms>",
      "time a connection without the token has to send request headers (env OPENPROGRAM_UNAUTHENTICATED_HEADERS_TIMEOUT_MS; default 2000)",
    )
    .option(
      "--loopback-health-slots <n>",
      "connections past the caps for local /healthz and /readyz (env OPENPROGRAM_LOOPBACK_HEALTH_SLOTS; default 8)",
    )
    .option(
      "--request-timeout-ms <ms>",
      "time a client has to send a whole request (env OPENPROGRAM_REQUEST_TIMEOUT_MS; default 30000)",
    )
    .option(
      "--keep-alive-timeout-ms <ms>",
      "how long an idle HTTP connection stays open (env OPENPROGRAM_KEEP_ALIVE_TIMEOUT_MS; default 5000)",
    )
    .option(
      "--ws-idle-timeout-ms <ms>",
      "close a WebSocket silent this long with no turn running; 0 never (env OPENPROGRAM_WS_IDLE_TIMEOUT_MS; default 1800000)",
    )
    .option(
      "--max-unsent-bytes <n>",
      "close (4008) a client leaving this many bytes of frames unread (env OPENPROGRAM_MAX_UNSENT_BYTES; default 8388608)",
    )
    .option(
      "--postgres <url>",
      "run as one replica of a cluster sharing this PostgreSQL database and the sessions root (env OPENPROGRAM_POSTGRES_URL; default: a single server, no database)",
    )
    .option(
      "--lease-ttl-ms <ms>",
      "with --postgres: a dead replica's turns become resumable elsewhere after this long (env OPENPROGRAM_LEASE_TTL_MS; default 10000)",
    )
    .option(
      "--pg-pool-size <n>",
      "with --postgres: pooled database connections of this replica (env OPENPROGRAM_PG_POOL_SIZE; default 10)",
    )
    .option(
      "--cluster-secret-file <file>",
      "with --postgres: the cluster's shared secrets, one per line, the first signs (env OPENPROGRAM_CLUSTER_SECRET_FILE, or the secrets in OPENPROGRAM_CLUSTER_SECRET); required",
    )
    .addOption(
      new Option("--log-format <format>", "log lines: json, human, or auto (JSON unless stdout is a terminal)").choices(
        ["json", "human", "auto"],
      ),
    )
    .action(lazy(traced(() => import("./commands/serve.js").then((loaded) => loaded.serveCommand))));

  program
    .command("completion")
    .description("print a completion script for your shell (commands, subcommands and options)")
    .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(COMPLETION_SHELLS))
    .action((shell: CompletionShell) => {
      io.stdout.write(completionScript(program, shell));
    });

  addHelpExamples(program);
  return program;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

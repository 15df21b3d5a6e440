import type { DispatcherErrorCode } from "@openprogram/dispatcher";
import type { McpErrorCode } from "@openprogram/mcp";
import type { ProcessRunnerErrorCode } from "@openprogram/process-runner";
import type { ResearchErrorCode } from "@openprogram/research";
import type { ErrorCode } from "@openprogram/session-context";
import type { CliErrorCode } from "./errors.js";

/** The `openprogram` exit codes; documented in the README and stable. */
export const EXIT_CODES = {
  /** The command did what was asked. */
  ok: 0,
  /** The program (or the model call it made) failed. */
  failed: 1,
  /** Usage or input error: nothing ran (bad flag, bad JSON, unknown session or module, provider not configured). */
  usage: 2,
  /** Interrupted with Ctrl-C (SIGINT): the turn was cancelled and committed. */
  interrupted: 130,
  /** Stopped with SIGTERM: the turn was cancelled and committed. */
  terminated: 143,
  /** stdout is a pipe whose reader has gone (`| head`): quiet, as a process killed by SIGPIPE (128 + 13). */
  brokenPipe: 141,
  /** The session is busy: another process runs or resumes the turn (EX_TEMPFAIL: try again later). */
  busy: 75,
  /** A budget stopped the turn: it is committed, and `openprogram resume` with a raised budget continues it. */
  budget: 3,
} as const;

/** One of the documented exit codes. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Every error code the CLI can meet: the core's, its plug-in packages' and its own. */
export type KnownErrorCode =
  | ErrorCode
  | DispatcherErrorCode
  | ProcessRunnerErrorCode
  | ResearchErrorCode
  | McpErrorCode
  | CliErrorCode;

/** The exit code of an error by when it happened: while setting up (nothing ran yet) or while the program ran. */
export interface ExitCodes {
  setup: ExitCode;
  run: ExitCode;
}

/** The caller gave us something unusable: exit 2 when it stops the command before anything runs. */
const USAGE: ExitCodes = { setup: EXIT_CODES.usage, run: EXIT_CODES.failed };
/** Configuration is the user's to fix even when it surfaces mid-run: always exit 2. */
const CONFIGURATION: ExitCodes = { setup: EXIT_CODES.usage, run: EXIT_CODES.usage };
/** Another process runs or resumes the session's turn: exit 75 (EX_TEMPFAIL), whenever it is found. */
const BUSY: ExitCodes = { setup: EXIT_CODES.busy, run: EXIT_CODES.busy };
/** Anything else went wrong: exit 1. */
const FAILURE: ExitCodes = { setup: EXIT_CODES.failed, run: EXIT_CODES.failed };

/**
 * The exit codes of every known error code. A `Record` over the union, so a
 * code renamed or added anywhere is a compile error here, never a silent
 * change of exit code. Codes not in it (a user program's own) exit 1.
 */
export const EXIT_CODES_BY_ERROR: Readonly<Record<KnownErrorCode, ExitCodes>> = {
  // The core
  invalid_input: USAGE,
  input_too_large: USAGE,
  invalid_session_id: USAGE,
  session_not_found: USAGE,
  session_exists: USAGE,
  not_agentic_function: USAGE,
  // The session named cannot be entered as it is: something else has its name, it is a link, or its meta.json is damaged.
  not_a_session: USAGE,
  unsafe_session_path: USAGE,
  unsafe_git_config: USAGE,
  corrupt_meta: USAGE,
  provider_config: CONFIGURATION,
  model_timeout: FAILURE,
  attachment_missing: FAILURE,
  // A project's openprogram.config.json asks for what only the user may allow (`openprogram trust`).
  untrusted_project_config: CONFIGURATION,
  price_table_invalid: CONFIGURATION,
  runtime_missing: CONFIGURATION,
  session_context_missing: FAILURE,
  node_not_found: FAILURE,
  // Branches: a head, tip or edit that names no conversation turn, or a compaction summary as the head.
  node_not_on_branch: USAGE,
  summary_head: USAGE,
  invalid_node: FAILURE,
  store_write_failed: FAILURE,
  store_lock_timeout: FAILURE,
  git_failed: FAILURE,
  context_version_mismatch: FAILURE,
  provider_error: FAILURE,
  // Tools offered to runtime.exec: a bad tool is the program's to fix; a loop past its limit is the run failing
  invalid_tool: FAILURE,
  tool_loop_limit: FAILURE,
  invalid_model_output: FAILURE,
  script_exhausted: FAILURE,
  ask_user_unavailable: CONFIGURATION,
  user_declined: FAILURE,
  ask_timeout: FAILURE,
  invalid_answer: USAGE,
  cancelled: FAILURE,
  session_busy: BUSY,
  // Durable turns (`resume`, `answer`)
  nothing_to_resume: USAGE,
  turn_not_found: USAGE,
  turn_not_resumable: USAGE,
  // A module a session's record names, that the user did not name, confirm, or keep under this folder.
  untrusted_program: USAGE,
  no_pending_question: USAGE,
  answer_required: USAGE,
  turn_suspended: FAILURE,
  internal_error: FAILURE,
  // Replaying a recording (`--replay`): the program asked something else, or more; the file is unreadable
  replay_mismatch: FAILURE,
  replay_exhausted: FAILURE,
  replayed_failure: FAILURE,
  recording_format: CONFIGURATION,
  recording_missing: CONFIGURATION,
  // Budgets: a crossed one stops the turn (exit 3, resumable); a bad one, or a cost budget on an unpriced model, is configuration
  budget_exceeded: { setup: EXIT_CODES.budget, run: EXIT_CODES.budget },
  budget_unpriced_model: CONFIGURATION,
  invalid_budget: CONFIGURATION,
  // A provider's capacity ("limits") stayed full past the longest wait: transient, try again later
  rate_limited: BUSY,
  // The dispatcher (`serve`)
  shutting_down: FAILURE,
  unknown_action: FAILURE,
  unknown_program: FAILURE,
  unknown_question: FAILURE,
  question_session_mismatch: USAGE,
  no_running_turn: FAILURE,
  listen_failed: FAILURE,
  web_assets_missing: FAILURE,
  too_many_turns: FAILURE,
  server_busy: FAILURE,
  too_many_requests: FAILURE,
  // The cluster (`serve --postgres`): the database is the operator's to fix; a lost lease or an unreachable replica is transient
  invalid_cluster_secret: CONFIGURATION,
  database_unavailable: CONFIGURATION,
  schema_too_new: CONFIGURATION,
  lease_lost: BUSY,
  replica_unreachable: BUSY,
  // The process runner (`run --isolate`, `serve --isolate`)
  child_process_failed: FAILURE,
  child_timeout: FAILURE,
  // The research harness (`research`)
  reply_format: FAILURE,
  artifact_write_failed: FAILURE,
  // MCP (`chat --mcp`, `mcp`): a bad or unknown mcpServers entry is configuration; a server that fails is not ours
  mcp_config_invalid: CONFIGURATION,
  mcp_server_unknown: CONFIGURATION,
  mcp_variable_missing: CONFIGURATION,
  mcp_server_start_failed: FAILURE,
  mcp_server_crashed: FAILURE,
  mcp_timeout: FAILURE,
  mcp_tool_error: FAILURE,
  mcp_request_failed: FAILURE,
  // The CLI
  package_unavailable: FAILURE,
  usage: USAGE,
};

/**
 * The exit code for an error. `during` says where it happened: while setting
 * up (flags, files, sessions, modules: usage codes exit 2) or while the
 * program ran (exit 1, except that provider configuration errors stay 2).
 */
export function exitCodeForError(code: string | undefined, during: "setup" | "run"): ExitCode {
  return exitCodesFor(code)[during];
}

/** True for errors of configuration (no provider, an unusable provider setting): the user's to fix, never the program's. */
export function isConfigurationError(code: string | undefined): boolean {
  return exitCodesFor(code) === CONFIGURATION;
}

function exitCodesFor(code: string | undefined): ExitCodes {
  return code !== undefined && Object.hasOwn(EXIT_CODES_BY_ERROR, code)
    ? EXIT_CODES_BY_ERROR[code as KnownErrorCode]
    : FAILURE;
}

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
  /** The session is busy: another process runs or resumes the turn (EX_TEMPFAIL: try again later). */
  busy: 75,
} as const;

/** One of the documented exit codes. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Error codes that mean the caller gave us something unusable; nothing ran. */
const USAGE_ERROR_CODES = new Set([
  "invalid_input",
  "invalid_session_id",
  "session_not_found",
  "session_exists",
  "not_agentic_function",
  "provider_config",
  "runtime_missing",
  "usage",
  "nothing_to_resume",
  "turn_not_found",
  "turn_not_resumable",
  "no_pending_question",
  "answer_required",
  "invalid_answer",
]);

/** Configuration errors are the user's to fix even when they surface mid-run. */
const CONFIGURATION_ERROR_CODES = new Set(["provider_config", "runtime_missing"]);

/**
 * The exit code for an error. `during` says where it happened: while setting
 * up (flags, files, sessions, modules: usage codes exit 2) or while the
 * program ran (exit 1, except that provider configuration errors stay 2).
 */
export function exitCodeForError(code: string | undefined, during: "setup" | "run"): ExitCode {
  if (code === undefined) return EXIT_CODES.failed;
  if (code === "session_busy") return EXIT_CODES.busy;
  if (during === "setup") return USAGE_ERROR_CODES.has(code) ? EXIT_CODES.usage : EXIT_CODES.failed;
  return CONFIGURATION_ERROR_CODES.has(code) ? EXIT_CODES.usage : EXIT_CODES.failed;
}

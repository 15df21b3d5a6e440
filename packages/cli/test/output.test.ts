import { describe, expect, it } from "vitest";
import { CancelledError, InvalidInputError, ProviderConfigError } from "@openprogram/session-context";
import { EXIT_CODES, exitCodeForError } from "../src/exit-codes.js";
import { formatDuration, formatError, formatResult, sessionLine, summarizeError } from "../src/output.js";

describe("what the CLI prints", () => {
  it("results: strings as they are, other values as pretty JSON, nothing for undefined", () => {
    expect(formatResult("plain text")).toBe("plain text");
    expect(formatResult({ a: [1, 2] })).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}');
    expect(formatResult(null)).toBe("null");
    expect(formatResult(42)).toBe("42");
    expect(formatResult(undefined)).toBeNull();
  });

  it("the session line", () => {
    expect(sessionLine("session_0123456789")).toBe(
      "session: session_0123456789 (--session session_0123456789 to continue)",
    );
  });

  it("errors: `error [code]: message`, the class name for errors without a code, the stack only when verbose", () => {
    const error = new ProviderConfigError("OPENAI_API_KEY", "The openai provider needs OPENAI_API_KEY.");
    expect(formatError(error, false)).toBe("error [provider_config]: The openai provider needs OPENAI_API_KEY.");
    expect(formatError(new TypeError("x is not a function"), false)).toBe("error [TypeError]: x is not a function");
    expect(formatError("a string", false)).toBe("error [error]: a string");
    const verbose = formatError(new InvalidInputError("outer", { cause: new Error("inner") }), true);
    expect(verbose).toMatch(/^error \[invalid_input\]: outer\n\s+at /);
    expect(verbose).toContain("caused by [error] inner");
    expect(summarizeError(new CancelledError("stop"))).toEqual({
      code: "cancelled",
      name: "CancelledError",
      message: "Cancelled: stop",
    });
  });

  it("durations", () => {
    expect(formatDuration(0.1234)).toBe("0.12s");
    expect(formatDuration(12.34)).toBe("12.3s");
    expect(formatDuration(125)).toBe("2m05s");
    expect(formatDuration(undefined)).toBe("");
  });
});

describe("exit codes", () => {
  it("setup errors of the caller's making exit 2, other setup failures 1", () => {
    for (const code of [
      "invalid_input",
      "invalid_session_id",
      "session_not_found",
      "not_agentic_function",
      "provider_config",
      "runtime_missing",
      "not_a_session",
      "unsafe_session_path",
      "corrupt_meta",
    ]) {
      expect(exitCodeForError(code, "setup")).toBe(EXIT_CODES.usage);
    }
    expect(exitCodeForError("corrupt_meta", "run")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError("git_failed", "run")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError("store_write_failed", "setup")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError(undefined, "setup")).toBe(EXIT_CODES.failed);
  });

  it("a failing program exits 1, except provider configuration errors, which stay 2", () => {
    expect(exitCodeForError("invalid_input", "run")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError("provider_error", "run")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError("runtime_missing", "run")).toBe(EXIT_CODES.usage);
    expect(exitCodeForError("provider_config", "run")).toBe(EXIT_CODES.usage);
  });
});

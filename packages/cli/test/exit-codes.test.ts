import { describe, expect, expectTypeOf, it } from "vitest";
import {
  EXIT_CODES,
  EXIT_CODES_BY_ERROR,
  exitCodeForError,
  isConfigurationError,
  type KnownErrorCode,
} from "../src/exit-codes.js";

describe("the exit-code table", () => {
  it("is keyed by every error code the CLI can meet: the core's, its plug-in packages' and its own", () => {
    expectTypeOf<KnownErrorCode>().toEqualTypeOf<keyof typeof EXIT_CODES_BY_ERROR>();
    for (const code of ["invalid_input", "unknown_program", "child_timeout", "reply_format", "package_unavailable"]) {
      expect(Object.keys(EXIT_CODES_BY_ERROR), code).toContain(code);
    }
  });

  it("gives a code it does not know (a user program's own) exit 1, wherever it happened", () => {
    expect(exitCodeForError("my_program_failed", "setup")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError("my_program_failed", "run")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError("toString", "setup")).toBe(EXIT_CODES.failed);
    expect(exitCodeForError("error", "run")).toBe(EXIT_CODES.failed);
  });

  it("keeps exit 2 for commander's usage errors and for configuration errors, also mid-run", () => {
    expect(exitCodeForError("usage", "setup")).toBe(EXIT_CODES.usage);
    expect(isConfigurationError("runtime_missing")).toBe(true);
    expect(isConfigurationError("provider_config")).toBe(true);
    expect(isConfigurationError("invalid_input")).toBe(false);
    expect(isConfigurationError(undefined)).toBe(false);
  });
});

import { OpenProgramError, ProviderError } from "../errors.js";
import type { RecordedError } from "./recording-format.js";

/** A failed call's error, enough to raise it again (in a recording, or across a process boundary). */
export function recordedError(error: unknown): RecordedError {
  if (error instanceof ProviderError) {
    return {
      name: error.name,
      code: error.code,
      message: error.message,
      status: error.status,
      providerMessage: error.providerMessage,
    };
  }
  if (error instanceof OpenProgramError) return { name: error.name, code: error.code, message: error.message };
  const plain = error instanceof Error ? error : new Error(String(error));
  return { name: plain.name, code: "internal_error", message: plain.message };
}

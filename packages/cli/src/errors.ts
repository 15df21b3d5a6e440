import { OpenProgramError, type ErrorCodesOf } from "@openprogram/session-context";
import type * as CliErrors from "./errors.js";

/**
 * A command needs a workspace package (the dispatcher, the research harness,
 * the process runner) that is missing or does not export what it should.
 * New to the CLI: the core has no error for "a sibling package is absent".
 */
export class PackageUnavailableError extends OpenProgramError {
  readonly code = "package_unavailable";
  constructor(
    readonly packageName: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${packageName} is unavailable: ${detail}. Reinstall @openprogram/cli (it depends on ${packageName}), or in the repository run \`pnpm build\`.`,
      options,
    );
  }
}

/**
 * The codes of the CLI's own errors, and `usage`: what commander's errors
 * (an unknown command or option, a missing argument) print as `error [usage]`.
 */
export type CliErrorCode = ErrorCodesOf<typeof CliErrors> | "usage";

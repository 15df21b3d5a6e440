import { OpenProgramError, type ErrorCodesOf } from "@openprogram/session-context";
import { clipLine } from "@openprogram/session-context/messages";
import type * as ResearchErrors from "./errors.js";

/** A stage's model reply does not follow the format its doc asks for; the stage fails rather than guess. */
export class ReplyFormatError extends OpenProgramError {
  readonly code = "reply_format";
  constructor(
    readonly stage: string,
    readonly problem: string,
    readonly reply: string,
  ) {
    super(
      `${stage}: the model's reply does not follow the format in the stage's doc: ${problem}. ` +
        `The reply begins ${JSON.stringify(clipLine(reply, 160))}. Run again (same session) or use a model that follows instructions.`,
    );
  }
}

/** An artifact could not be written to the work dir; files already there are untouched. */
export class ArtifactWriteError extends OpenProgramError {
  readonly code = "artifact_write_failed";
  constructor(
    readonly workDir: string,
    readonly artifact: string,
    cause: unknown,
  ) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(
      `Could not write the artifact ${JSON.stringify(artifact)} in the work dir ${workDir}${errno ? ` (${errno})` : ""}: ${(cause as Error)?.message ?? String(cause)}`,
      {
        cause,
      },
    );
  }
}

/** The codes of this package's errors, for tables keyed by code (the core's are its `ErrorCode`). */
export type ResearchErrorCode = ErrorCodesOf<typeof ResearchErrors>;

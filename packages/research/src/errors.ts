import { OpenProgramError } from "@openprogram/session-context";

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
        `The reply begins ${JSON.stringify(excerpt(reply))}. Run again (same session) or use a model that follows instructions.`,
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

function excerpt(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= 160 ? line : `${line.slice(0, 159)}…`;
}

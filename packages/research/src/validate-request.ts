import { resolve } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import { resolveSections } from "./sections.js";
import { checkWorkDir } from "./work-dir.js";

/** What validateResearchRequest checks besides the task. */
export interface ResearchRequestOptions {
  workDir?: string | undefined;
  sections?: readonly string[] | undefined;
  interactive?: boolean | undefined;
}

/**
 * Checks a research request before anything runs, so that no model call, no
 * session and no file is spent on it: an empty task, a work dir that is a file,
 * lies under a file or is not writable (without `workDir`: the default parent
 * `./research`), an unknown or repeated section. Throws InvalidInputError.
 */
export function validateResearchRequest(task: unknown, options: ResearchRequestOptions = {}): void {
  if (typeof task !== "string" || task.trim() === "") {
    throw new InvalidInputError(
      `The research task must be a non-empty string${typeof task === "string" ? "" : `, not ${task === null ? "null" : typeof task}`}: say what to research.`,
    );
  }
  if (options.interactive !== undefined && typeof options.interactive !== "boolean") {
    throw new InvalidInputError("interactive must be true or false.");
  }
  resolveSections(options.sections);
  if (options.workDir !== undefined && (typeof options.workDir !== "string" || options.workDir.trim() === "")) {
    throw new InvalidInputError("workDir must be a non-empty path; leave it out for ./research/<sessionId>.");
  }
  checkWorkDir(resolve(options.workDir ?? "research"));
}

import { join, resolve } from "node:path";
import { currentSession, InvalidInputError } from "@openprogram/session-context";
import type { ProgramEntry } from "@openprogram/session-context/host";
import { RESEARCH_AGENT_DOC, researchAgent } from "./research-agent.js";
import type { ResearchResult } from "./types.js";

/** Where a server's research runs write: `<workDirRoot>/<session id>`. */
export interface ResearchProgramOptions {
  /** Default: `./research` of the server's working directory. */
  workDirRoot?: string;
}

const NETWORK_FIELDS = new Set(["task", "interactive", "sections"]);

/**
 * The research harness as a program a server offers to the network: clients
 * choose the task, whether to be asked, and the sections, never where files
 * go (a client naming `workDir` is refused). Each session's artifacts go to
 * `<workDirRoot>/<session id>`, so continuing a session continues its files.
 * Runs `research_agent` inside the caller's session context, like any entry.
 */
export function researchProgram(options: ResearchProgramOptions = {}): ProgramEntry<ResearchResult> {
  const root = resolve(options.workDirRoot ?? "research");
  return {
    description: RESEARCH_AGENT_DOC,
    async run(input: unknown): Promise<ResearchResult> {
      if (input === null || typeof input !== "object" || Array.isArray(input)) {
        throw new InvalidInputError(
          'The research program takes {"task": "...", "interactive"?: boolean, "sections"?: [...]}.',
        );
      }
      const fields = input as Record<string, unknown>;
      const unknown = Object.keys(fields).filter((key) => !NETWORK_FIELDS.has(key));
      if (unknown.length > 0) {
        throw new InvalidInputError(
          `The research program does not accept ${unknown.map((key) => JSON.stringify(key)).join(", ")}: clients choose the task, "interactive" and "sections"; the server decides where files go (${root}/<session id>).`,
        );
      }
      const { task, interactive, sections } = fields;
      if (interactive !== undefined && typeof interactive !== "boolean")
        throw new InvalidInputError('The research program\'s "interactive" must be true or false.');
      if (
        sections !== undefined &&
        (!Array.isArray(sections) || sections.some((section) => typeof section !== "string"))
      ) {
        throw new InvalidInputError('The research program\'s "sections" must be an array of section names.');
      }
      return researchAgent({
        task: task as string,
        workDir: join(root, currentSession().sessionId),
        ...(interactive !== undefined ? { interactive } : {}),
        ...(sections !== undefined ? { sections: sections as string[] } : {}),
      });
    },
  };
}

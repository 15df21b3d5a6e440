import { parseProgramRef, RESEARCH_PROGRAM_REF, type ResumableProgram } from "@openprogram/session-context";
import { loadResearch } from "./contracts.js";
import { loadProgram } from "./load-program.js";
import { parseProgramSpec } from "./program-spec.js";

/**
 * Finds the program a turn recorded, the way `run` and `research` named it:
 * a module export (JavaScript or, through tsx, TypeScript), or the research
 * harness. Null for a ref this command does not know (the core then says so).
 */
export async function resolveProgramRef(ref: string, cwd: string): Promise<ResumableProgram | null> {
  if (ref === RESEARCH_PROGRAM_REF) return (await loadResearch()).researchAgent;
  const parsed = parseProgramRef(ref);
  if (parsed.kind !== "module") return null;
  const loaded = await loadProgram(parseProgramSpec(`${parsed.modulePath}#${parsed.exportName}`, cwd), cwd);
  return loaded.fn;
}

import { terminalText } from "@openprogram/session-context/messages";
import {
  RESEARCH_PROGRAM_REF,
  type RecordedModule,
  type RecordedModulePolicy,
  type ResumableProgram,
} from "@openprogram/session-context/turns";
import { askYesNo } from "./confirm.js";
import { loadResearch } from "./contracts.js";
import { isTerminal, type CliIo } from "./io.js";
import { loadProgram } from "./load-program.js";
import { parseProgramSpec } from "./program-spec.js";

/**
 * Finds a program a turn recorded by name: the research harness. Null for
 * anything else; a `module:` ref is the core's to check (see
 * recordedModulePolicy) before loadRecordedModule imports it.
 */
export async function resolveProgramRef(ref: string): Promise<ResumableProgram | null> {
  if (ref === RESEARCH_PROGRAM_REF) return (await loadResearch()).researchAgent;
  return null;
}

/** Imports a recorded module the core has checked, the way `run` loads one (JavaScript, or TypeScript through tsx). */
export async function loadRecordedModule(module: RecordedModule, cwd: string): Promise<ResumableProgram> {
  return (await loadProgram(parseProgramSpec(`${module.modulePath}#${module.exportName}`, cwd), cwd)).fn;
}

/**
 * Who vouches for a module a session's turn recorded, from the command line:
 * the module named with `--program`, a module under the working directory, or
 * the user's yes on a terminal. Without a terminal the refusal names the flag.
 */
export function recordedModulePolicy(io: CliIo, programFlag: string | undefined): RecordedModulePolicy {
  const interactive = isTerminal(io.stdin) && isTerminal(io.stderr);
  return {
    ...(programFlag !== undefined ? { named: [parseProgramSpec(programFlag, io.cwd).modulePath] } : {}),
    projectDir: io.cwd,
    ...(interactive
      ? {
          confirm: (module) =>
            askYesNo(
              io,
              `${module.turn} ran ${terminalText(module.modulePath)}#${terminalText(module.exportName)}, ` +
                "a module outside this folder. Importing it runs its code. Run it?",
            ),
        }
      : {}),
    howToAllow: (modulePath) => `run the command again with --program ${modulePath}`,
  };
}

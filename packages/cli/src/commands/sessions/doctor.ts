import { doctorSessions, type DoctorFinding, type DoctorReport } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions doctor`. */
export interface DoctorFlags {
  fix?: boolean;
  json?: boolean;
}

/**
 * `openprogram sessions doctor [<id>]`: checks the store (or one session) and,
 * with --fix, repairs what it safely can, printing every finding and what was
 * done. Exit 0 when no error is left unrepaired, 1 otherwise.
 */
export async function doctorCommand(
  sessionId: string | undefined,
  flags: DoctorFlags,
  context: CommandContext,
): Promise<number> {
  const { io } = context;
  let report: DoctorReport;
  try {
    if (sessionId !== undefined) await requireExistingSession(sessionId);
    report = await doctorSessions({ ...(sessionId !== undefined ? { sessionId } : {}), fix: flags.fix === true });
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
  if (flags.json) {
    writeJson(io.stdout, report);
    return report.healthy ? EXIT_CODES.ok : EXIT_CODES.failed;
  }
  for (const finding of report.findings) writeLine(io.stdout, describeFinding(finding));
  const errors = report.findings.filter((finding) => finding.severity === "error");
  const fixed = report.findings.filter((finding) => finding.fixed).length;
  const scope =
    sessionId !== undefined ? `session ${sessionId}` : `${report.sessionsChecked} session(s) in ${report.root}`;
  writeLine(
    io.stderr,
    report.findings.length === 0
      ? `doctor: ${scope}: no problems found.`
      : `doctor: ${scope}: ${report.findings.length} finding(s), ${errors.length} error(s), ${fixed} repaired.${!flags.fix && report.findings.some((finding) => !finding.fixed) ? " Run with --fix to repair what can be repaired safely." : ""}`,
  );
  return report.healthy ? EXIT_CODES.ok : EXIT_CODES.failed;
}

function describeFinding(finding: DoctorFinding): string {
  const where = finding.sessionId ?? "(registry)";
  const state = finding.fixed ? "fixed" : finding.severity;
  return `${state.padEnd(7)} ${where}  ${finding.kind}: ${finding.message}${finding.path ? ` [${finding.path}]` : ""}\n        -> ${finding.remedy}`;
}

// The tool-day program (packages/session-context/test/programs/tool-day-program.mjs) with the built core, as
// the CLI loads a user's program. The CLI tool-resume tests and the kill -9 suite (tests/resilience) run it.
import * as core from "@openprogram/session-context";
import { toolDayProgram } from "../../../session-context/test/programs/tool-day-program.mjs";

export const { weather, bookRoom, shout, planDay } = toolDayProgram(core);

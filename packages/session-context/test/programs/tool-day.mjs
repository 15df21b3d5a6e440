// The tool-day program (tool-day-program.mjs) for the core's tool resume tests.
// Imported from the sources, so that a child process (tsx) loads the same code as the test.
import * as core from "../../src/index.js";
import { toolDayProgram } from "./tool-day-program.mjs";

export const { weather, bookRoom, shout, planDay, planDayAtOnce } = toolDayProgram(core);

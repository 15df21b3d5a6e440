// A vitest reporter that keeps what vitest's JSON report drops: the errors no test owned
// (a rejection nobody awaited, a throw in a timer after its test ended). vitest fails the run
// for them, but its JSON report still reads "0 failed", so without this file the summary
// could only say that a step failed. Written only when there was such an error.
//
//   reporters: [[<this file>, { outputFile: "<report dir>/<package>.unhandled.json" }]]
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export default class UnhandledErrorsReporter {
  constructor(options = {}) {
    this.outputFile = options.outputFile;
  }

  onTestRunEnd(_testModules, unhandledErrors = []) {
    if (!this.outputFile) return;
    // A stale file from an earlier run in the same folder would be counted again.
    rmSync(this.outputFile, { force: true });
    if (unhandledErrors.length === 0) return;
    const errors = unhandledErrors.map((error) => ({
      name: String(error?.name ?? "Error"),
      message: String(error?.message ?? error),
      stack: String(error?.stack ?? "")
        .split("\n")
        .slice(0, 8)
        .join("\n"),
    }));
    mkdirSync(dirname(this.outputFile), { recursive: true });
    writeFileSync(this.outputFile, `${JSON.stringify({ unhandledErrors: errors }, null, 2)}\n`);
  }
}

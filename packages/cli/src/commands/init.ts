import { closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import type { CommandContext } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { initFiles, nextSteps, TEST_FILES } from "../init-template.js";
import { ownInstall } from "../own-install.js";
import { cliVersion } from "../version.js";
import { writeLine } from "../output.js";
import { reportFailure } from "../report.js";

/**
 * `openprogram init [dir]`: writes a small working program into `dir`
 * (created if missing). Never overwrites: a package.json already there is
 * kept (a project that installed the packages has one), and when any other of
 * its files exists nothing is written and the error names them (exit 2).
 */
export async function initCommand(dir: string | undefined, _flags: object, context: CommandContext): Promise<number> {
  const { io } = context;
  try {
    const target = resolve(io.cwd, dir ?? ".");
    const install = ownInstall(cliVersion());
    const files = initFiles(projectName(target), install.specs);
    const exists = (name: string): boolean => statSync(join(target, name), { throwIfNoEntry: false }) !== undefined;
    const keptManifest = exists("package.json");
    if (keptManifest) delete files["package.json"];
    // The project's own test and its recording are kept too when there (they are the user's), never a conflict.
    const keptTests = TEST_FILES.filter(exists);
    for (const name of keptTests) delete files[name];
    const taken = Object.keys(files).filter(exists);
    if (taken.length > 0)
      throw new InvalidInputError(
        `${target} already has ${taken.join(", ")}; init writes nothing over existing files. Choose a new directory: openprogram init <dir>.`,
      );
    mkdirSync(target, { recursive: true });
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(dirname(join(target, name)), { recursive: true });
      writeNew(join(target, name), content);
    }
    writeLine(io.stdout, `Wrote ${Object.keys(files).join(", ")} in ${target}.`);
    if (keptManifest) writeLine(io.stdout, "Kept the package.json already there.");
    if (keptTests.length > 0) writeLine(io.stdout, `Kept ${keptTests.join(", ")} already there.`);
    const steps = nextSteps({
      relativeDir: relative(io.cwd, target) || ".",
      wroteManifest: !keptManifest,
      source: install.source,
    });
    for (const line of steps) writeLine(io.stdout, line);
    return EXIT_CODES.ok;
  } catch (error) {
    return reportFailure(context, error, { json: false, during: "setup" });
  }
}

/** npm's rules for a name, loosely: lower case, no spaces. */
function projectName(target: string): string {
  return (
    basename(target)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/^[._-]+/, "") || "my-openprogram"
  );
}

/**
 * "wx": a file that appeared since the check is not overwritten either. Mode
 * 0644 whatever the umask: a group-writable openprogram.config.json (umask 002)
 * would be passed over as a project file others can change.
 */
function writeNew(path: string, content: string): void {
  const fd = openSync(path, "wx", 0o644);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

import { resolve } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import {
  listTrustedProjects,
  PROJECT_CONFIG_FILE,
  revokeProjectTrust,
  searchProjectConfig,
  trustProject,
} from "@openprogram/session-context/runtime";
import type { CommandContext } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { writeJson, writeLine, writeText } from "../output.js";
import { reportFailure } from "../report.js";
import { formatTable } from "../table.js";

/** Flags of `openprogram trust`. */
export interface TrustFlags {
  list?: boolean;
  revoke?: boolean;
  json?: boolean;
}

/** The settings a trusted project file may then decide, shown before the user relies on them. */
const UNLOCKED_SETTINGS = ["provider", "baseUrl", "script"] as const;

/**
 * `openprogram trust [dir]`: trusts the project's openprogram.config.json
 * that applies in `dir` (default: here), as it is now, so it may point your
 * keys at the address it names and read replies from outside its folder; a
 * change to the file needs trusting again. `--list` shows the trusted files,
 * `--revoke [dir]` stops trusting one.
 */
export async function trustCommand(
  dir: string | undefined,
  flags: TrustFlags,
  context: CommandContext,
): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  try {
    if (flags.list === true && flags.revoke === true)
      throw new InvalidInputError("Pass either --list or --revoke, not both.");
    if (flags.list === true) {
      if (dir !== undefined) throw new InvalidInputError("--list takes no folder; it lists every trusted project.");
      const projects = listTrustedProjects(io.env);
      if (json) writeJson(io.stdout, projects);
      else if (projects.length === 0) writeLine(io.stderr, "No project is trusted.");
      else
        writeText(
          io.stdout,
          formatTable(
            ["FILE", "STATUS", "TRUSTED AT (UTC)"],
            projects.map((project) => [project.file, project.status, project.trustedAt.replace("T", " ").slice(0, 19)]),
          ),
        );
      return EXIT_CODES.ok;
    }
    const folder = resolve(io.cwd, dir ?? ".");
    if (flags.revoke === true) {
      const removed = await revokeProjectTrust(folder, io.env);
      if (removed.length === 0)
        throw new InvalidInputError(`No trusted ${PROJECT_CONFIG_FILE} applies in ${folder}; nothing to revoke.`);
      if (json) writeJson(io.stdout, { ok: true, revoked: removed });
      else for (const project of removed) writeLine(io.stdout, `No longer trusted: ${project.file}`);
      return EXIT_CODES.ok;
    }
    const trusted = await trustProject(folder, io.env);
    if (json) {
      writeJson(io.stdout, { ok: true, trusted });
      return EXIT_CODES.ok;
    }
    writeLine(io.stdout, `Trusted ${trusted.file} as it is now (sha256 ${trusted.sha256.slice(0, 16)}…).`);
    const settings = unlockedSettings(folder, io.env);
    if (settings.length > 0) writeLine(io.stdout, `It sets: ${settings.join(", ")}.`);
    writeLine(
      io.stdout,
      "It may now send your API keys to the address it names and read replies from outside its folder; " +
        "any change to it needs `openprogram trust` again. `openprogram trust --revoke` undoes this.",
    );
    return EXIT_CODES.ok;
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
}

/** `name=value` for each setting the file now decides, from the file as trusted. */
function unlockedSettings(folder: string, env: NodeJS.ProcessEnv): string[] {
  const found = searchProjectConfig(folder, env);
  let content: Record<string, unknown>;
  try {
    content = JSON.parse(found.text) as Record<string, unknown>;
  } catch {
    return [];
  }
  if (content === null || typeof content !== "object") return [];
  return UNLOCKED_SETTINGS.filter((name) => typeof content[name] === "string").map(
    (name) => `${name} ${JSON.stringify(content[name])}`,
  );
}

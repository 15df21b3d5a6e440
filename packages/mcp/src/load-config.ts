// Where `mcpServers` come from: the user's $OPENPROGRAM_HOME/config.json and
// the project's openprogram.config.json (found as the runtime finds it), the
// project's entries winning by name. A project file is often someone else's
// (a cloned repository): an entry of it that starts a program (`command`) or
// lets tools run without asking (`allow`) or sends the user's environment
// variables to its server (`${VAR}` in `headers`) is used only once the user trusts
// the file (`openprogram trust`), like the other keys only the user may decide.
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { UntrustedProjectConfigError } from "@openprogram/session-context";
import { configPath, projectTrust, searchProjectConfig } from "@openprogram/session-context/runtime";
import { McpConfigError, McpServerUnknownError } from "./errors.js";
import { checkServerConfig, type CheckedServer } from "./server-config.js";
import { referencedVariables } from "./variables.js";

/** Where to look for configuration (defaults: this process's environment and working directory). */
export interface ConfigLookup {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Every configured server by name, each checked; a refused project entry is kept as its refusal. */
export type ConfiguredServers = Map<string, CheckedServer | UntrustedProjectConfigError>;

/** The servers the user's config.json and the project's file define, the project's winning by name. */
export function configuredServers(lookup: ConfigLookup = {}): ConfiguredServers {
  const env = lookup.env ?? process.env;
  const cwd = lookup.cwd ?? process.cwd();
  const servers: ConfiguredServers = new Map();
  const userFile = configPath(env);
  for (const [name, value] of Object.entries(serversOf(readUserConfig(userFile), userFile)))
    servers.set(name, checkServerConfig(name, value, userFile, dirname(userFile)));
  const found = searchProjectConfig(cwd, env);
  if (found.path === null) return servers;
  const project = serversOf(parse(found.text, found.path), found.path);
  if (Object.keys(project).length === 0) return servers;
  const trust = projectTrust(found, env);
  for (const [name, value] of Object.entries(project)) {
    const checked = checkServerConfig(name, value, found.path, dirname(found.path));
    const variables = referencedVariables(checked);
    const asks =
      checked.kind === "stdio"
        ? "starts a program"
        : checked.config.allow
          ? "lets tools run without asking"
          : variables.length > 0
            ? `sends your environment's ${variables.join(", ")} to ${new URL(checked.config.url).host}`
            : null;
    if (trust === "trusted" || asks === null) servers.set(name, checked);
    else {
      const dir = dirname(found.path);
      const toTrust =
        trust === "changed"
          ? `You trusted ${found.path} before, but it has changed since. Review it, then run \`openprogram trust ${dir}\` again.`
          : `A project's file may do that only once you trust it: review ${found.path}, then run \`openprogram trust ${dir}\`.`;
      servers.set(
        name,
        new UntrustedProjectConfigError(
          found.path,
          "mcpServers",
          `${found.path} defines the MCP server "${name}", which ${asks}. Nothing was started. ${toTrust}`,
        ),
      );
    }
  }
  return servers;
}

/** The server named `name`; McpServerUnknownError, or the project's refusal, when it cannot be used. */
export function configuredServer(name: string, lookup: ConfigLookup = {}): CheckedServer {
  const servers = configuredServers(lookup);
  const found = servers.get(name);
  if (found instanceof UntrustedProjectConfigError) throw found;
  if (found) return found;
  const env = lookup.env ?? process.env;
  const known = [...servers.keys()].join(", ") || "none";
  throw new McpServerUnknownError(
    name,
    `No MCP server is named "${name}" (configured: ${known}). Add it under "mcpServers" in ${configPath(env)} ` +
      `or in the project's openprogram.config.json: { "command", "args" } or { "url" }.`,
  );
}

function readUserConfig(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new McpConfigError("*", path, `${path} cannot be read: ${(error as Error).message}`);
  }
  return parse(text, path);
}

function parse(text: string, path: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new McpConfigError("*", path, `${path} is not valid JSON: ${(error as Error).message}`);
  }
}

function serversOf(content: unknown, path: string): Record<string, unknown> {
  const servers = (content as { mcpServers?: unknown } | null)?.mcpServers;
  if (servers === undefined) return {};
  if (typeof servers !== "object" || servers === null || Array.isArray(servers))
    throw new McpConfigError("*", path, `"mcpServers" in ${path} must be an object of servers by name.`);
  return servers as Record<string, unknown>;
}

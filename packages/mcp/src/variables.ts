// `${VAR}` in an entry's `headers` and `env` values: a token stays in the
// environment (or an --env-file), never in a configuration file someone may
// commit or share. Values are substituted when the server is reached, and
// never written to an error or a log.
import { McpVariableMissingError } from "./errors.js";
import type { CheckedServer } from "./server-config.js";

/** `${NAME}`: a variable's name as shells spell it. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The variables an entry's `headers` (HTTP) or `env` (stdio) values name, in order, each once. */
export function referencedVariables(server: CheckedServer): string[] {
  const names = new Set<string>();
  for (const value of Object.values(substituted(server) ?? {}))
    for (const match of value.matchAll(REFERENCE)) names.add(match[1] as string);
  return [...names];
}

/**
 * The entry with every `${NAME}` in its `headers` or `env` values replaced by
 * that variable of `env`; McpVariableMissingError naming the server and the
 * variable when one is unset or empty.
 */
export function withVariables(server: CheckedServer, env: NodeJS.ProcessEnv): CheckedServer {
  const values = substituted(server);
  if (values === undefined) return server;
  const key = server.kind === "http" ? "headers" : "env";
  const expanded: Record<string, string> = {};
  for (const [field, value] of Object.entries(values))
    expanded[field] = value.replace(REFERENCE, (_reference, name: string) => {
      const found = env[name];
      if (found === undefined || found === "")
        throw new McpVariableMissingError(
          server.name,
          name,
          `The MCP server "${server.name}" (mcpServers in ${server.file}) needs the environment variable ${name}, ` +
            `which its "${key}" name as \${${name}} for ${JSON.stringify(field)}, but it is ${found === undefined ? "not set" : "empty"}. ` +
            `Set it in the environment (or in a file given with --env-file) before starting; its value is never written to the configuration.`,
        );
      return found;
    });
  return server.kind === "http"
    ? { ...server, config: { ...server.config, headers: expanded } }
    : { ...server, config: { ...server.config, env: expanded } };
}

function substituted(server: CheckedServer): Record<string, string> | undefined {
  return server.kind === "http" ? server.config.headers : server.config.env;
}

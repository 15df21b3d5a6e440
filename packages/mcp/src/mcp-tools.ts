import { createHash } from "node:crypto";
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { tool, type Tool } from "@openprogram/session-context";
import type { ServerConnection } from "./connection.js";
import { McpToolError } from "./errors.js";
import { configuredServer, type ConfigLookup } from "./load-config.js";
import { checkServerConfig, type CheckedServer, type McpServerConfig } from "./server-config.js";
import { connectionTo } from "./server-pool.js";
import { toolErrorText, toolResultValue } from "./tool-result.js";
import { withVariables } from "./variables.js";

/** Options of mcpTools. */
export interface McpToolsOptions extends ConfigLookup {
  /** More tools that run without asking (besides the configuration's `allow`): you wrote this code. */
  allow?: readonly string[];
  /** More tools never offered (besides the configuration's `deny`). */
  deny?: readonly string[];
  /** Offer only these tools (by their MCP names). */
  only?: readonly string[];
  /** Put before each tool's name as the model sees it (default "<server>__"; "" for the server's own names). */
  prefix?: string;
  /** The server's entry, given here instead of read from configuration. */
  config?: McpServerConfig;
}

/**
 * The tools of the MCP server `name` (from `mcpServers` in the configuration)
 * as ordinary tools for `runtime.exec(content, { tools })`: each call is a
 * recorded tool node, replayed on resume and run again after a crash only when
 * the server marks the tool idempotent or read-only; each asks the user first
 * unless `allow`ed. Starts the server on first use (once per process).
 */
export async function mcpTools(name: string, options: McpToolsOptions = {}): Promise<Tool[]> {
  const server = resolveServer(name, options);
  const connection = await connectionTo(server);
  const listed = await listTools(connection);
  const deny = new Set([...(server.config.deny ?? []), ...(options.deny ?? [])]);
  const allow = new Set([...(server.config.allow ?? []), ...(options.allow ?? [])]);
  const only = options.only ? new Set(options.only) : null;
  const prefix = options.prefix ?? `${name}__`;
  return listed
    .filter((entry) => !deny.has(entry.name) && (only === null || only.has(entry.name)))
    .map((entry) => asTool(server, entry, providerName(prefix, entry.name), !allow.has(entry.name)));
}

/** The checked entry for `name` (the one given in code, or the configuration's), its `${VAR}`s substituted. */
export function resolveServer(name: string, options: McpToolsOptions): CheckedServer {
  const server = options.config
    ? checkServerConfig(name, options.config, "code", options.cwd ?? process.cwd())
    : configuredServer(name, options);
  return withVariables(server, options.env ?? process.env);
}

async function listTools(connection: ServerConnection): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await connection.request("tools/list", (request) =>
      connection.client.listTools(cursor === undefined ? {} : { cursor }, request),
    );
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

function asTool(server: CheckedServer, entry: McpTool, name: string, needsApproval: boolean): Tool {
  const annotations = entry.annotations ?? {};
  const { $schema: _dialect, ...input } = entry.inputSchema as Record<string, unknown>;
  return tool({
    name,
    description: entry.description?.trim() || entry.title || `The tool ${entry.name} of the MCP server ${server.name}.`,
    input: { ...input, type: "object" },
    // Read-only tools have no effect to repeat; idempotent ones repeat theirs harmlessly.
    idempotent: annotations.idempotentHint === true || annotations.readOnlyHint === true,
    needsApproval,
    execute: async (args, { signal }) => {
      // Fetched per call: a server that crashed since is started again.
      const connection = await connectionTo(server);
      const result = await connection.request(
        `the call of ${entry.name}`,
        (request) => connection.client.callTool({ name: entry.name, arguments: args }, CallToolResultSchema, request),
        { signal },
      );
      // A server on the 2024-10-07 protocol answers { toolResult }.
      if (!("content" in result)) return (result as { toolResult?: unknown }).toolResult ?? null;
      const answer = result as CallToolResult;
      if (answer.isError === true) throw new McpToolError(server.name, entry.name, toolErrorText(answer));
      return toolResultValue(answer);
    },
  });
}

/** A name every provider accepts (1-64 of letters, digits, '_', '-'), kept distinct by a hash when it must change. */
function providerName(prefix: string, mcpName: string): string {
  const wanted = `${prefix}${mcpName}`;
  if (/^[A-Za-z0-9_-]{1,64}$/.test(wanted)) return wanted;
  const cleaned = wanted.replace(/[^A-Za-z0-9_-]/g, "_");
  const hash = createHash("sha256").update(wanted).digest("hex").slice(0, 8);
  return `${cleaned.slice(0, 55)}_${hash}`;
}

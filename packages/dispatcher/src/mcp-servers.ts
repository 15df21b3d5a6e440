import { closeMcpServers, mcpTools, McpServerUnknownError, type McpServerConfig } from "@openprogram/mcp";
import type { Tool } from "@openprogram/session-context";
import type { McpServerInfo } from "./protocol.js";

/**
 * The MCP servers whose tools a turn may be given (`mcpServers` of the
 * dispatcher's options: `openprogram serve --mcp <name>`), as `chat --mcp`
 * gives them: the mcp package's `mcpTools`, each server started on first use
 * and reused by later turns. Approval stays the server entry's: its tools ask
 * first unless `allow`ed.
 */
export class McpServerChoices {
  private readonly servers: ReadonlyMap<string, McpServerConfig>;

  constructor(servers: Record<string, McpServerConfig> = {}) {
    this.servers = new Map(Object.entries(servers));
  }

  /** What the page lists: each server's name, transport, and the tools it runs without asking. */
  list(): McpServerInfo[] {
    return [...this.servers].map(([name, config]) => ({
      name,
      transport: "command" in config ? "stdio" : "http",
      allow: config.allow ?? [],
    }));
  }

  /** The tools of the named servers, in order (a server not offered here is refused, naming the ones that are). */
  async toolsFor(names: readonly string[]): Promise<Tool[]> {
    const tools: Tool[] = [];
    for (const name of new Set(names)) {
      const config = this.servers.get(name);
      if (!config) {
        const offered = [...this.servers.keys()].join(", ") || "none";
        throw new McpServerUnknownError(
          name,
          `This dispatcher offers no MCP server named "${name}" (offered: ${offered}). Start it with ` +
            `\`openprogram serve --mcp ${name}\` (and "${name}" under "mcpServers" in openprogram.config.json), ` +
            "or list them with list_mcp_servers.",
        );
      }
      tools.push(...(await mcpTools(name, { config })));
    }
    return tools;
  }

  /** Stops the servers started for turns (only when this dispatcher offers some: the pool is the process's). */
  async close(): Promise<void> {
    if (this.servers.size > 0) await closeMcpServers();
  }
}

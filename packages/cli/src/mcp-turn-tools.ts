import type { Runtime } from "@openprogram/session-context";
import type { CliIo } from "./io.js";
import { loadMcp, type McpModule } from "./contracts.js";

/** The MCP servers a command enabled for its turn (`--mcp`), started, and the runtime that offers their tools. */
export interface McpTurnTools {
  runtime: Runtime | null;
  /** Shuts the servers down (the command is done with them). */
  close(): Promise<void>;
}

/**
 * Starts the MCP servers named by `--mcp` (entries of mcpServers) before the
 * turn, so one that cannot start stops the command before anything runs, and
 * gives a runtime whose every exec offers their tools besides the program's
 * own. No servers: the runtime as it is, nothing loaded.
 */
export async function mcpTurnTools(
  servers: readonly string[] | undefined,
  runtime: Runtime | null,
  io: CliIo,
): Promise<McpTurnTools> {
  if (servers === undefined || servers.length === 0 || runtime === null)
    return { runtime, close: () => Promise.resolve() };
  const mcp: McpModule = await loadMcp();
  try {
    const tools = [];
    for (const name of servers) tools.push(...(await mcp.mcpTools(name, { env: io.env, cwd: io.cwd })));
    return { runtime: mcp.runtimeWithTools(runtime, tools), close: () => mcp.closeMcpServers() };
  } catch (error) {
    await mcp.closeMcpServers();
    throw error;
  }
}

/** commander's collector for a repeatable `--mcp <server>`. */
export function collectServers(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

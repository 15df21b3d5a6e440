import type { ChatOptions, ExecOptions, Runtime, ToolEntry } from "@openprogram/session-context";

/**
 * A runtime whose every `exec` (and `chat`) offers `tools` besides the ones
 * it is given: how a turn enables an MCP server's tools for a program that
 * does not ask for them itself (`openprogram run --mcp <server>`). A tool the
 * exec names itself wins over one of these with the same name. Everything
 * else (provider, model, compaction) is the runtime's own.
 */
export function runtimeWithTools(runtime: Runtime, tools: readonly ToolEntry[]): Runtime {
  if (tools.length === 0) return runtime;
  const offered = (own: readonly ToolEntry[] | undefined): ToolEntry[] => {
    const taken = new Set((own ?? []).map(toolName));
    return [...(own ?? []), ...tools.filter((entry) => !taken.has(toolName(entry)))];
  };
  return {
    get provider() {
      return runtime.provider;
    },
    get model() {
      return runtime.model;
    },
    get compaction() {
      return runtime.compaction;
    },
    get compactor() {
      return runtime.compactor;
    },
    exec: <Options extends ExecOptions = ExecOptions>(content: Parameters<Runtime["exec"]>[0], options?: Options) =>
      runtime.exec<Options>(content, { ...options, tools: offered(options?.tools) } as unknown as Options),
    chat: (text: string, options: ChatOptions = {}) =>
      runtime.chat(text, { ...options, tools: offered(options.tools) }),
  };
}

/** The name the model sees: an agentic function's, or a tool()'s. */
function toolName(entry: ToolEntry): string {
  const named = entry as { agentic?: { name?: string }; name?: string };
  return named.agentic?.name ?? named.name ?? "";
}

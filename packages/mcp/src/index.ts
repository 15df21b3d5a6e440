export { mcpTools, type McpToolsOptions } from "./mcp-tools.js";
export { runtimeWithTools } from "./runtime-with-tools.js";
export {
  listMcpResources,
  readMcpResource,
  readMcpResourceContent,
  type McpResourceBlock,
  type McpResourceEntry,
  type McpResourceOptions,
} from "./resources.js";
export { getMcpPrompt, listMcpPrompts, type McpPrompt, type McpPromptEntry, type McpPromptMessage } from "./prompts.js";
export { closeMcpServers, openMcpServerCount } from "./server-pool.js";
export { configuredServer, configuredServers, type ConfigLookup, type ConfiguredServers } from "./load-config.js";
export type {
  CheckedServer,
  HttpServerConfig,
  McpServerConfig,
  ServerPolicy,
  StdioServerConfig,
} from "./server-config.js";
export {
  McpConfigError,
  McpRequestError,
  McpServerCrashedError,
  McpServerStartError,
  McpServerUnknownError,
  McpTimeoutError,
  McpToolError,
  McpVariableMissingError,
  type McpErrorCode,
} from "./errors.js";
export { STDERR_TAIL_BYTES } from "./stderr-tail.js";
export { programsServer, type ProgramsServerOptions } from "./serve/programs-server.js";
export { serveProgramsOverStdio } from "./serve/serve-stdio.js";
export {
  SESSION_ID_ARGUMENT,
  type ServedFunction,
  type ServedProgram,
  type ServedRunner,
} from "./serve/served-program.js";
export { handleMcpHttpRequest } from "./serve/serve-http.js";

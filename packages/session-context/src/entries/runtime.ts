// @openprogram/session-context/runtime: making a runtime and its providers, and the
// configuration they come from (config files, project trust): what hosts (the CLI, the
// dispatcher, the MCP server) and programs that pick their own model use. The exec-facing
// types (Runtime, ExecOptions, ContentBlock) and `chat` come from the root.

export { createRuntime, type ProviderRuntimeConfig } from "../runtime/create-runtime.js";
export { requireRuntime, resolveRuntime, type ResolveRuntimeOptions } from "../runtime/resolve-runtime.js";
export {
  configPath,
  DEFAULT_MODELS,
  findProjectConfig,
  LOCAL_OPENAI_SERVERS,
  PROJECT_CONFIG_FILE,
  resolveRuntimeConfig,
  type ConfigSources,
  type ProviderName,
  type ResolveConfigOptions,
  type ResolvedRuntimeConfig,
  type RuntimeConfig,
} from "../runtime/config.js";
export {
  listTrustedProjects,
  projectTrust,
  revokeProjectTrust,
  searchProjectConfig,
  trustedProjectsPath,
  trustProject,
  TRUSTED_PROJECTS_FILE,
  type FoundProjectConfig,
  type ProjectTrust,
  type SkippedProjectFile,
  type TrustedProject,
  type TrustedProjectStatus,
} from "../runtime/project-trust.js";
export { ModelRuntime, type RuntimeDefaults } from "../runtime/model-runtime.js";
export { MAX_ATTACHMENT_BYTES, MAX_TURN_ATTACHMENT_BYTES } from "../content/content-blocks.js";
export { DEFAULT_MAX_ITERATIONS } from "../tools/tool-loop.js";
export { MAX_CONCURRENT_TOOL_CALLS, REPEATED_FAILURE_LIMIT } from "../tools/run-tool-calls.js";

// Providers
export { OpenAIChatProvider, type OpenAIProviderOptions } from "../providers/openai.js";
export { AnthropicProvider, type AnthropicProviderOptions } from "../providers/anthropic.js";
export {
  ScriptedProvider,
  type RecordedRequest,
  type ScriptEntry,
  type ScriptedProviderOptions,
  type ScriptedToolCall,
} from "../providers/scripted.js";
export type {
  ChatMessage,
  CompleteOptions,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ReportedUsage,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from "../providers/types.js";

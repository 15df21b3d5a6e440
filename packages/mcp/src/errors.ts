import { OpenProgramError, type ErrorCodesOf } from "@openprogram/session-context";
import type * as McpErrors from "./errors.js";

/** An `mcpServers` entry that cannot be used (no command or url, both, a bad allow list...). */
export class McpConfigError extends OpenProgramError {
  readonly code = "mcp_config_invalid";
  constructor(
    readonly server: string,
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

/** `mcpTools(name)` for a name no configuration defines. */
export class McpServerUnknownError extends OpenProgramError {
  readonly code = "mcp_server_unknown";
  constructor(
    readonly server: string,
    message: string,
  ) {
    super(message);
  }
}

/** An entry's `headers` or `env` name `${VAR}`, and that variable is not set (or is empty). */
export class McpVariableMissingError extends OpenProgramError {
  readonly code = "mcp_variable_missing";
  constructor(
    readonly server: string,
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/** The server could not be started or did not complete the MCP handshake. */
export class McpServerStartError extends OpenProgramError {
  readonly code = "mcp_server_start_failed";
  constructor(
    readonly server: string,
    readonly stderrTail: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The server went away (its process exited, its connection closed) while a request was waiting. */
export class McpServerCrashedError extends OpenProgramError {
  readonly code = "mcp_server_crashed";
  constructor(
    readonly server: string,
    readonly stderrTail: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The server did not answer a request in time. */
export class McpTimeoutError extends OpenProgramError {
  readonly code = "mcp_timeout";
  constructor(
    readonly server: string,
    readonly timeoutMs: number,
    readonly stderrTail: string,
    message: string,
  ) {
    super(message);
  }
}

/** The server answered a request with a JSON-RPC error (a prompt's arguments refused, a resource it does not have). */
export class McpRequestError extends OpenProgramError {
  readonly code = "mcp_request_failed";
  constructor(
    readonly server: string,
    /** The JSON-RPC error code the server answered with. */
    readonly rpcCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A tool call the server answered with `isError: true`: its text is what the model reads. */
export class McpToolError extends OpenProgramError {
  readonly code = "mcp_tool_error";
  constructor(
    readonly server: string,
    readonly tool: string,
    message: string,
  ) {
    super(message);
  }
}

/** The codes of this package's errors, for tables keyed by code (the core's are its `ErrorCode`). */
export type McpErrorCode = ErrorCodesOf<typeof McpErrors>;

import { basename } from "node:path";
import type { ContentBlock as McpContentBlock, Prompt } from "@modelcontextprotocol/sdk/types.js";
import type { ContentBlock } from "@openprogram/session-context";
import type { McpResourceOptions } from "./resources.js";
import { resolveServer } from "./mcp-tools.js";
import { connectionTo } from "./server-pool.js";

/** One prompt as a server lists it, with the arguments it takes. */
export interface McpPromptEntry {
  name: string;
  title?: string;
  description?: string;
  arguments: Array<{ name: string; description?: string; required: boolean }>;
}

/** One message of a prompt, its content as exec's content blocks. */
export interface McpPromptMessage {
  role: "user" | "assistant";
  content: ContentBlock[];
}

/** A prompt the server filled in: its messages, and all their blocks in order for `runtime.exec(prompt.content)`. */
export interface McpPrompt {
  description?: string;
  messages: McpPromptMessage[];
  content: ContentBlock[];
}

/** The prompts the MCP server `name` lists (every page). */
export async function listMcpPrompts(name: string, options: McpResourceOptions = {}): Promise<McpPromptEntry[]> {
  const connection = await connectionTo(resolveServer(name, options));
  const prompts: Prompt[] = [];
  let cursor: string | undefined;
  do {
    const page = await connection.request("prompts/list", (request) =>
      connection.client.listPrompts(cursor === undefined ? {} : { cursor }, request),
    );
    prompts.push(...page.prompts);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return prompts.map((prompt) => ({
    name: prompt.name,
    ...(prompt.title !== undefined ? { title: prompt.title } : {}),
    ...(prompt.description !== undefined ? { description: prompt.description } : {}),
    arguments: (prompt.arguments ?? []).map((argument) => ({
      name: argument.name,
      ...(argument.description !== undefined ? { description: argument.description } : {}),
      required: argument.required === true,
    })),
  }));
}

/**
 * Gets the prompt `prompt` of the MCP server `name`, filled in with `args`
 * (MCP's prompt arguments are strings): its messages with their content as
 * exec's content blocks (text; images and audio as data; an embedded
 * resource as its text or as a file; a resource link as a line of text).
 */
export async function getMcpPrompt(
  name: string,
  prompt: string,
  args: Readonly<Record<string, string>> = {},
  options: McpResourceOptions = {},
): Promise<McpPrompt> {
  const connection = await connectionTo(resolveServer(name, options));
  const got = await connection.request(`the prompt ${prompt}`, (request) =>
    connection.client.getPrompt({ name: prompt, arguments: { ...args } }, request),
  );
  const messages = got.messages.map((message) => ({ role: message.role, content: [execBlock(message.content)] }));
  return {
    ...(got.description !== undefined ? { description: got.description } : {}),
    messages,
    content: messages.flatMap((message) => message.content),
  };
}

/** An MCP content block as one of exec's. */
export function execBlock(block: McpContentBlock): ContentBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", data: block.data, mediaType: block.mimeType };
    case "audio":
      return { type: "audio", data: block.data, mediaType: block.mimeType };
    case "resource": {
      const resource = block.resource;
      if ("text" in resource && typeof resource.text === "string") return { type: "text", text: resource.text };
      const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
      return {
        type: "file",
        data: blob,
        mediaType: resource.mimeType ?? "application/octet-stream",
        name: basename(new URL(resource.uri).pathname) || "resource",
      };
    }
    case "resource_link":
      return { type: "text", text: `${block.title ?? block.name}: ${block.uri}` };
  }
}

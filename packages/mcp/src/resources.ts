import { basename } from "node:path";
import type { Resource } from "@modelcontextprotocol/sdk/types.js";
import type { ContentBlock } from "@openprogram/session-context";
import { resolveServer, type McpToolsOptions } from "./mcp-tools.js";
import { connectionTo } from "./server-pool.js";

/** Options for reaching a server's resources (where its configuration is, or the entry itself). */
export type McpResourceOptions = Pick<McpToolsOptions, "config" | "env" | "cwd">;

/** One resource as a server lists it. */
export interface McpResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A resource's content: text, or base64 bytes, with its URI and type. */
export type McpResourceBlock =
  | { type: "text"; uri: string; mimeType?: string; text: string }
  | { type: "blob"; uri: string; mimeType?: string; blob: string };

/** The resources the MCP server `name` lists (every page). */
export async function listMcpResources(name: string, options: McpResourceOptions = {}): Promise<McpResourceEntry[]> {
  const connection = await connectionTo(resolveServer(name, options));
  const resources: Resource[] = [];
  let cursor: string | undefined;
  do {
    const page = await connection.request("resources/list", (request) =>
      connection.client.listResources(cursor === undefined ? {} : { cursor }, request),
    );
    resources.push(...page.resources);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return resources.map((resource) => ({
    uri: resource.uri,
    name: resource.name,
    ...(resource.title !== undefined ? { title: resource.title } : {}),
    ...(resource.description !== undefined ? { description: resource.description } : {}),
    ...(resource.mimeType !== undefined ? { mimeType: resource.mimeType } : {}),
  }));
}

/** Reads one resource of the MCP server `name` as content blocks (a resource may have several parts). */
export async function readMcpResource(
  name: string,
  uri: string,
  options: McpResourceOptions = {},
): Promise<McpResourceBlock[]> {
  const connection = await connectionTo(resolveServer(name, options));
  const read = await connection.request(`the read of ${uri}`, (request) =>
    connection.client.readResource({ uri }, request),
  );
  return read.contents.map((part) => {
    const mimeType = part.mimeType !== undefined ? { mimeType: part.mimeType } : {};
    return "text" in part && typeof part.text === "string"
      ? { type: "text", uri: part.uri, ...mimeType, text: part.text }
      : {
          type: "blob",
          uri: part.uri,
          ...mimeType,
          blob: "blob" in part && typeof part.blob === "string" ? part.blob : "",
        };
  });
}

/**
 * Reads one resource of the MCP server `name` as exec's content blocks, for
 * `runtime.exec([...])`: a text part as text; a part of bytes as an image
 * (image/* types) or a file, named after its URI.
 */
export async function readMcpResourceContent(
  name: string,
  uri: string,
  options: McpResourceOptions = {},
): Promise<ContentBlock[]> {
  return (await readMcpResource(name, uri, options)).map((part): ContentBlock => {
    if (part.type === "text") return { type: "text", text: part.text };
    const mediaType = part.mimeType ?? "application/octet-stream";
    const fileName = basename(new URL(part.uri).pathname) || "resource";
    return mediaType.startsWith("image/")
      ? { type: "image", data: part.blob, mediaType, name: fileName }
      : { type: "file", data: part.blob, mediaType, name: fileName };
  });
}

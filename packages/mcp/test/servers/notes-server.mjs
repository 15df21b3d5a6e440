// A real MCP server (the SDK's McpServer) for the tests: over stdio when run as a child,
// or handed a transport by notesServer() for Streamable HTTP. Every effect goes to
// NOTES_LOG (one line per call), so tests can count what ran.
import { appendFileSync } from "node:fs";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

export function notesServer(log = process.env.NOTES_LOG) {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  const record = (line) => {
    if (log) appendFileSync(log, `${line}\n`);
  };
  server.registerTool(
    "add",
    {
      description: "Adds two numbers.",
      inputSchema: { a: z.number(), b: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => {
      record(`add ${a} ${b}`);
      if (process.env.NOTES_HANG_ON_ADD === `${a}+${b}`) await new Promise(() => {});
      return { content: [{ type: "text", text: String(a + b) }] };
    },
  );
  server.registerTool(
    "write.note",
    { description: "Writes a note.", inputSchema: { text: z.string() } },
    async ({ text }) => {
      record(`write ${text}`);
      if (process.env.NOTES_HANG_ON === text) await new Promise(() => {});
      return { content: [{ type: "text", text: `saved: ${text}` }] };
    },
  );
  server.registerTool("fail", { description: "Always fails.", inputSchema: {} }, async () => ({
    isError: true,
    content: [{ type: "text", text: "the disk is full" }],
  }));
  server.registerTool("crash", { description: "Exits the server.", inputSchema: {} }, async () => {
    process.stderr.write("fatal: the notes database is corrupt\n");
    process.exit(3);
  });
  server.registerTool("hang", { description: "Never answers.", inputSchema: {} }, async () => {
    record("hang");
    await new Promise(() => {});
  });
  server.registerResource(
    "readme",
    "notes://readme",
    { title: "Read me", description: "How the notes work.", mimeType: "text/markdown" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Notes\nWrite them down." }] }),
  );
  // A template (not in resources/list): a resource of bytes.
  server.registerResource(
    "logo",
    new ResourceTemplate("notes://logo/{size}", { list: undefined }),
    { title: "Logo", mimeType: "image/png" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: "iVBORw0KGgo=" }] }),
  );
  server.registerPrompt(
    "review",
    {
      title: "Review a note",
      description: "Asks for a review of a note.",
      argsSchema: { note: z.string(), tone: z.string().optional() },
    },
    ({ note, tone }) => ({
      description: `A review of "${note}"`,
      messages: [
        {
          role: "user",
          content: { type: "text", text: `Review this note${tone ? ` in a ${tone} tone` : ""}: ${note}` },
        },
        {
          role: "user",
          content: {
            type: "resource",
            resource: { uri: "notes://readme", mimeType: "text/markdown", text: "# Notes\nWrite them down." },
          },
        },
        { role: "assistant", content: { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } },
      ],
    }),
  );
  return server;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  process.stderr.write(`notes server ${process.pid} starting\n`);
  if (process.env.NOTES_PID_FILE) appendFileSync(process.env.NOTES_PID_FILE, `${process.pid}\n`);
  await notesServer().connect(new StdioServerTransport());
}

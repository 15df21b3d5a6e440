// MCP servers' tools enabled for a turn from the web page, in Chromium (issue 35): the dispatcher offers a real
// stdio MCP server (the mcp package's notes server, the SDK's McpServer in a child process); the page lists it, a
// ticked box gives its tools to the chat turns, and approval stays the server entry's (allowed tools run, the
// others ask in the dialog).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer, type FakeReply, type ReceivedRequest } from "@openprogram/session-context/testing";
import type { Browser, Page } from "playwright-core";
import { launchChromium, UI_WAIT } from "./browser-kit.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { closeAll, onCleanup, startDispatcher } from "./helpers.js";

const NOTES_SERVER = fileURLToPath(new URL("../../mcp/test/servers/notes-server.mjs", import.meta.url));

let browser: Browser | undefined;
let page: Page | undefined;
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await page?.close();
  await closeAll();
});

type Message = { role: string; content?: string };
type OfferedTool = { function: { name: string } };

/** The tools a request offered the model, by name (none: the request had no `tools`). */
function offered(request: ReceivedRequest | undefined): string[] {
  return ((request?.json.tools ?? []) as OfferedTool[]).map((entry) => entry.function.name);
}

/** The model: without tools it says so; asked to add or to write a note, it calls that notes tool; then reports. */
function notesModel(request: ReceivedRequest): FakeReply {
  const messages = (request.json.messages ?? []) as Message[];
  const last = messages.at(-1);
  if (last?.role === "tool") return `Done: ${last.content ?? ""}`;
  const names = offered(request);
  if (names.length === 0) return "No tools here.";
  const text = last?.content ?? "";
  if (text.includes("add")) return { toolCalls: [{ name: "notes__add", arguments: { a: 2, b: 3 } }] };
  const write = names.find((name) => name.startsWith("notes__write_note")) as string;
  return { toolCalls: [{ name: write, arguments: { text: "buy milk" } }] };
}

describe("MCP servers' tools on the web page, in Chromium", () => {
  it("lists the offered servers, gives a ticked server's tools to the turn, and asks before tools not allowed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "openprogram-dispatcher-mcp-"));
    onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, "notes.log");
    const model = await startFakeOpenAIServer(notesModel);
    onCleanup(() => model.close());
    const runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    const served = await startDispatcher({
      runtime,
      mcpServers: {
        notes: {
          command: process.execPath,
          args: [NOTES_SERVER],
          env: { NOTES_LOG: log },
          allow: ["add"],
          deny: ["hang"],
        },
      },
    });
    browser ??= await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(served.dispatcher.url);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    const servers = page.locator("#mcp-servers");
    await servers.waitFor(UI_WAIT);
    expect((await servers.locator("label.mcp-server").allTextContents()).map((text) => text.trim())).toEqual([
      "notes (stdio; runs add without asking)",
    ]);
    const box = servers.getByRole("checkbox", { name: /notes/ });
    expect(await box.isChecked()).toBe(false);

    // Nothing ticked: the turn offers no tools.
    await page.fill("#chat-input", "Hello");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "No tools here." }).waitFor(UI_WAIT);
    expect(offered(model.requests[0])).toEqual([]);

    // Ticked: the server's tools (all but the denied one); an allowed tool runs without asking.
    await box.check();
    await page.fill("#chat-input", "Please add 2 and 3");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "Done: 5" }).waitFor(UI_WAIT);
    expect(offered(model.requests[1])).toEqual([
      "notes__add",
      expect.stringMatching(/^notes__write_note_[0-9a-f]{8}$/),
      "notes__fail",
      "notes__crash",
    ]);
    const tree = page.locator("#call-tree");
    await tree.locator(".tool-result", { hasText: "5" }).first().waitFor(UI_WAIT);
    expect(readFileSync(log, "utf8")).toBe("add 2 3\n");

    // A tool the entry does not allow asks first, in the question dialog.
    await page.fill("#chat-input", "Write a note");
    await page.click("#chat-send");
    const dialog = page.locator("#question-dialog");
    await dialog
      .locator("#question-text", {
        hasText: /Allow the tool notes__write_note_[0-9a-f]{8} to run with \{"text":"buy milk"\}\?/,
      })
      .waitFor(UI_WAIT);
    expect(readFileSync(log, "utf8")).toBe("add 2 3\n");
    await dialog.getByRole("button", { name: "yes" }).click();
    await page.locator("#messages li.llm", { hasText: "Done: saved: buy milk" }).waitFor(UI_WAIT);
    expect(readFileSync(log, "utf8")).toBe("add 2 3\nwrite buy milk\n");

    // Unticked again: the next turn has no tools.
    await box.uncheck();
    const before = model.requests.length;
    await page.fill("#chat-input", "Thanks");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "No tools here." }).nth(1).waitFor(UI_WAIT);
    expect(offered(model.requests[before])).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("refuses a server it does not offer, and a malformed list, before anything is written", async () => {
    const model = await startFakeOpenAIServer(() => "unused");
    onCleanup(() => model.close());
    const runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    const served = await startDispatcher({ runtime });
    const client = await served.connect();
    expect(await client.request({ type: "list_mcp_servers" }, "mcp_servers")).toEqual({
      type: "mcp_servers",
      servers: [],
    });
    const unknown = await client.refused({ type: "chat", text: "hi", mcp_servers: ["github"], client_msg_id: "m1" });
    expect(unknown).toMatchObject({ type: "error", code: "mcp_server_unknown", action: "chat", ref: "m1" });
    expect(unknown.message).toContain('offers no MCP server named "github" (offered: none)');
    const malformed = await client.refused({ type: "chat", text: "hi", mcp_servers: "github" });
    expect(malformed).toMatchObject({ code: "invalid_input" });
    expect(malformed.message).toContain("chat.mcp_servers must be a list of at most 32 names");
    expect(model.requests).toHaveLength(0);
    expect(await served.store.db.listSessions()).toEqual([]);
  });
});

// `${VAR}` in an entry's headers (and a stdio entry's env): the token comes from the environment, never the file.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UntrustedProjectConfigError } from "@openprogram/session-context";
import { trustProject } from "@openprogram/session-context/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  closeMcpServers,
  configuredServers,
  mcpTools,
  McpServerStartError,
  McpVariableMissingError,
} from "../src/index.js";
import { notesEntry, scratch, type Scratch } from "./helpers.js";
import { startNotesHttpServer, type NotesHttpServer } from "./http-server.js";

let space: Scratch;
let http: NotesHttpServer;
beforeEach(async () => {
  space = scratch();
  http = await startNotesHttpServer(space.log, "s3cret-from-env");
});
afterEach(async () => {
  await closeMcpServers();
  await http.close();
  space.cleanup();
});

const signal = new AbortController().signal;

describe("environment variables in mcpServers entries", () => {
  it("sends a header whose value names a variable with that variable's value", async () => {
    space.userConfig({
      mcpServers: { notes: { url: http.url, headers: { Authorization: "Bearer ${NOTES_TOKEN}" } } },
    });
    const env = { ...space.env, NOTES_TOKEN: "s3cret-from-env" };
    const tools = await mcpTools("notes", { env, cwd: space.dir, only: ["add"] });
    expect(await tools[0]?.execute({ a: 1, b: 2 }, { signal, toolCallId: "c1" })).toBe("3");
    expect(http.authorizations.length).toBeGreaterThan(0);
    expect(http.authorizations.every((header) => header === "Bearer s3cret-from-env")).toBe(true);
  });

  it("refuses an unset or empty variable before reaching the server, naming the server and the variable", async () => {
    space.userConfig({
      mcpServers: { notes: { url: http.url, headers: { Authorization: "Bearer ${NOTES_TOKEN}" } } },
    });
    for (const env of [space.env, { ...space.env, NOTES_TOKEN: "" }]) {
      const error = await mcpTools("notes", { env, cwd: space.dir }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(McpVariableMissingError);
      expect(error).toMatchObject({ code: "mcp_variable_missing", server: "notes", variable: "NOTES_TOKEN" });
      expect((error as Error).message).toContain('The MCP server "notes"');
      expect((error as Error).message).toContain("environment variable NOTES_TOKEN");
      expect((error as Error).message).toContain('"Authorization"');
    }
    expect(http.authorizations).toEqual([]);
  });

  it("never writes a header's value into an error", async () => {
    const error = await mcpTools("notes", {
      env: { ...space.env, NOTES_TOKEN: "wrong-but-secret-value" },
      config: { url: http.url, headers: { Authorization: "Bearer ${NOTES_TOKEN}" } },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpServerStartError);
    expect((error as Error).message).toContain("401");
    expect(JSON.stringify({ message: (error as Error).message, stack: (error as Error).stack })).not.toContain(
      "wrong-but-secret-value",
    );
  });

  it("gives a stdio server a variable of ours through its env", async () => {
    const config = notesEntry("${NOTES_LOG_FILE}");
    const tools = await mcpTools("notes", { config, env: { ...space.env, NOTES_LOG_FILE: space.log }, only: ["add"] });
    await tools[0]?.execute({ a: 4, b: 5 }, { signal, toolCallId: "c1" });
    expect(space.effects()).toEqual(["add 4 5"]);
  });

  it("uses a project's header variables only once the file is trusted", async () => {
    const project = join(space.dir, "repo");
    mkdirSync(project);
    const file = join(project, "openprogram.config.json");
    writeFileSync(
      file,
      JSON.stringify({ mcpServers: { notes: { url: http.url, headers: { Authorization: "Bearer ${HOME_TOKEN}" } } } }),
    );
    chmodSync(file, 0o644);
    const refused = configuredServers({ env: space.env, cwd: project }).get("notes");
    expect(refused).toBeInstanceOf(UntrustedProjectConfigError);
    expect((refused as Error).message).toContain("sends your environment's HOME_TOKEN to 127.0.0.1:");
    await trustProject(project, space.env);
    expect(configuredServers({ env: space.env, cwd: project }).get("notes")).toMatchObject({ kind: "http" });
  });
});

// Where mcpServers come from, and what a project's file may ask for before the user trusts it.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UntrustedProjectConfigError } from "@openprogram/session-context";
import { trustProject } from "@openprogram/session-context/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configuredServers, mcpTools, McpConfigError, McpServerUnknownError } from "../src/index.js";
import { scratch, type Scratch } from "./helpers.js";

let space: Scratch;
let project: string;
beforeEach(() => {
  space = scratch();
  project = join(space.dir, "repo");
  mkdirSync(project);
});
afterEach(() => space.cleanup());

function projectConfig(content: unknown): void {
  const file = join(project, "openprogram.config.json");
  writeFileSync(file, JSON.stringify(content));
  chmodSync(file, 0o644);
}

const lookup = () => ({ env: space.env, cwd: project });

describe("mcpServers configuration", () => {
  it("merges the user's servers with the project's, the project's winning by name", () => {
    space.userConfig({
      mcpServers: { github: { url: "https://api.example.com/mcp" }, notes: { url: "https://user.example/mcp" } },
    });
    projectConfig({ mcpServers: { notes: { url: "https://project.example/mcp", headers: { "X-Team": "a" } } } });
    const servers = configuredServers(lookup());
    expect(servers.get("github")).toMatchObject({ kind: "http", config: { url: "https://api.example.com/mcp" } });
    expect(servers.get("notes")).toMatchObject({
      kind: "http",
      file: join(project, "openprogram.config.json"),
      config: { url: "https://project.example/mcp", headers: { "X-Team": "a" } },
    });
  });

  it("refuses a project's server that starts a program, or lets tools run unasked, until the file is trusted", async () => {
    projectConfig({
      mcpServers: {
        local: { command: "node", args: ["server.js"], cwd: "tools" },
        remote: { url: "https://example.com/mcp", allow: ["delete_everything"] },
        plain: { url: "https://example.com/mcp" },
      },
    });
    const before = configuredServers(lookup());
    expect(before.get("local")).toBeInstanceOf(UntrustedProjectConfigError);
    expect((before.get("local") as Error).message).toContain('"local", which starts a program. Nothing was started.');
    expect((before.get("local") as Error).message).toContain("openprogram trust");
    expect(before.get("remote")).toBeInstanceOf(UntrustedProjectConfigError);
    expect(before.get("plain")).toMatchObject({ kind: "http" });
    const refused = await mcpTools("local", lookup()).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: "untrusted_project_config", key: "mcpServers" });

    await trustProject(project, space.env);
    const after = configuredServers(lookup());
    // A relative cwd is the project's folder's.
    expect(after.get("local")).toMatchObject({ kind: "stdio", config: { cwd: join(project, "tools") } });
    expect(after.get("remote")).toMatchObject({ kind: "http", config: { allow: ["delete_everything"] } });

    projectConfig({ mcpServers: { local: { command: "node", args: ["other.js"] } } });
    expect((configuredServers(lookup()).get("local") as Error).message).toContain("has changed since");
  });

  it("names an unknown server and a bad entry", async () => {
    space.userConfig({ mcpServers: { github: { url: "https://example.com/mcp" } } });
    const unknown = await mcpTools("gitlab", lookup()).catch((caught: unknown) => caught);
    expect(unknown).toBeInstanceOf(McpServerUnknownError);
    expect((unknown as Error).message).toContain('No MCP server is named "gitlab" (configured: github)');
    for (const [entry, problem] of [
      [{}, 'needs "command"'],
      [{ command: "x", url: "http://y" }, 'both "command" and "url"'],
      [{ command: "x", args: [1] }, '"args" must be a list of strings'],
      [{ url: "file:///etc/passwd" }, "http: or https:"],
      [{ url: "http://y", timeoutMs: 0 }, '"timeoutMs" must be a positive number'],
    ] as const) {
      space.userConfig({ mcpServers: { bad: entry } });
      const error = (() => {
        try {
          configuredServers(lookup());
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(McpConfigError);
      expect((error as Error).message).toContain(problem);
    }
  });
});

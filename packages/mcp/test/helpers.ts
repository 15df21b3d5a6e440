import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTempStore, type TempStore } from "@openprogram/session-context/testing";
import { afterEach, beforeEach } from "vitest";
import { closeMcpServers, type McpServerConfig } from "../src/index.js";

/** A test server's file. */
export function serverFile(name: "notes-server" | "broken-server" | "silent-server"): string {
  return fileURLToPath(new URL(`./servers/${name}.mjs`, import.meta.url));
}

/** A folder of one's own for a test: HOME, OPENPROGRAM_HOME and a log of the server's effects. */
export interface Scratch {
  dir: string;
  env: NodeJS.ProcessEnv;
  log: string;
  /** The lines the notes server logged (one per effect). */
  effects(): string[];
  /** Writes $OPENPROGRAM_HOME/config.json. */
  userConfig(content: unknown): void;
  cleanup(): void;
}

export function scratch(): Scratch {
  const dir = mkdtempSync(join(tmpdir(), "openprogram-mcp-"));
  const log = join(dir, "effects.log");
  const env = { ...process.env, HOME: dir, OPENPROGRAM_HOME: join(dir, ".openprogram") };
  return {
    dir,
    env,
    log,
    effects: () => {
      try {
        return readFileSync(log, "utf8").trim().split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
    userConfig: (content) => {
      const home = env.OPENPROGRAM_HOME;
      rmSync(home, { recursive: true, force: true });
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, "config.json"), JSON.stringify(content));
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The notes server as a stdio entry, logging its effects to `log`. */
export function notesEntry(
  log: string,
  extra: Partial<McpServerConfig> & Record<string, unknown> = {},
): McpServerConfig {
  return {
    command: process.execPath,
    args: [serverFile("notes-server")],
    env: { NOTES_LOG: log, ...((extra.env as Record<string, string>) ?? {}) },
    ...extra,
  };
}

/**
 * Before each test of the file, a temp store and a scratch folder, handed to `use`; after it, every MCP server
 * this process started closed and both removed.
 */
export function eachTestInMcpSpace(use: (made: { store: TempStore; space: Scratch }) => void): void {
  let made: { store: TempStore; space: Scratch } | null = null;
  beforeEach(() => {
    made = { store: createTempStore("openprogram-mcp-store-"), space: scratch() };
    use(made);
  });
  afterEach(async () => {
    await closeMcpServers();
    made?.store.cleanup();
    made?.space.cleanup();
  });
}

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionEvent, SessionNode } from "@openprogram/session-context";
import type { ScriptEntry } from "@openprogram/session-context/runtime";
import { createTempStore, type TempStore } from "@openprogram/session-context/testing";
import { afterEach, beforeEach } from "vitest";

/** Path of a program in test/programs/. */
export function programPath(name: string): string {
  return fileURLToPath(new URL(`./programs/${name}`, import.meta.url));
}

export { waitFor } from "@openprogram/session-context/testing";

/** A fresh temp store for each test of the calling suite, removed after it. */
export function useTempStore(): TempStore {
  let store: TempStore | null = null;
  const current = (): TempStore => {
    if (!store) throw new Error("useTempStore(): the store exists only while a test runs.");
    return store;
  };
  beforeEach(() => {
    store = createTempStore("openprogram-runner-");
  });
  afterEach(() => {
    store?.cleanup();
    store = null;
  });
  return {
    get db() {
      return current().db;
    },
    get root() {
      return current().root;
    },
    get home() {
      return current().home;
    },
    cleanup: () => current().cleanup(),
  };
}

/** Node files committed in the session's git repository (what the turn's commit holds). */
export function committedNodeFiles(root: string, sessionId: string): string[] {
  return execFileSync("git", ["ls-files", "history"], { cwd: join(root, sessionId), encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
}

/** Node files on disk. */
export function nodeFilesOnDisk(root: string, sessionId: string): string[] {
  return readdirSync(join(root, sessionId, "history"))
    .filter((name) => name.endsWith(".json"))
    .map((name) => `history/${name}`);
}

/**
 * The child's environment: its own OPENPROGRAM_HOME (no config.json from the
 * machine) and the scripted provider reading `replies` from a file.
 */
export function scriptedEnv(
  store: TempStore,
  replies: readonly ScriptEntry[],
  name = "script.json",
): Record<string, string> {
  const path = join(store.home, name);
  writeFileSync(path, JSON.stringify(replies));
  return {
    OPENPROGRAM_HOME: store.home,
    OPENPROGRAM_PROVIDER: "scripted",
    OPENPROGRAM_SCRIPT: path,
    OPENPROGRAM_MODEL: "scripted",
  };
}

/** The child's environment with no provider at all. */
export function noProviderEnv(store: TempStore): Record<string, string> {
  return { OPENPROGRAM_HOME: store.home, OPENPROGRAM_PROVIDER: "none" };
}

/** The state letter in /proc/<pid>/stat ("R", "S", "Z", ...), or null when the process is gone. */
export function processState(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name is in parentheses and may contain spaces: the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function isRunning(pid: number): boolean {
  const state = processState(pid);
  return state !== null && state !== "Z";
}

/** Every live (non-zombie) process whose process group is `pgid`, from /proc. */
export function liveGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the name: state, ppid, pgrp.
    if (Number(fields[2]) === pgid && fields[0] !== "Z") members.push(Number(entry));
  }
  return members;
}

/** True while any process (zombies included) is in the process group: kill(-pgid, 0). */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/** Collects a context's events; `whenNode` resolves on the first node event matching. */
export function eventRecorder(): {
  events: SessionEvent[];
  onEvent: (event: SessionEvent) => void;
  whenNode: (match: (node: SessionNode, op: string) => boolean) => Promise<SessionNode>;
} {
  const events: SessionEvent[] = [];
  const watchers: Array<{ match: (node: SessionNode, op: string) => boolean; resolve: (node: SessionNode) => void }> =
    [];
  return {
    events,
    onEvent(event) {
      events.push(event);
      if (event.type !== "node") return;
      for (const watcher of [...watchers]) {
        if (watcher.match(event.node, event.op)) {
          watchers.splice(watchers.indexOf(watcher), 1);
          watcher.resolve(event.node);
        }
      }
    },
    whenNode(match) {
      const seen = events.find((event) => event.type === "node" && match(event.node, event.op));
      if (seen && seen.type === "node") return Promise.resolve(seen.node);
      return new Promise((resolve) => watchers.push({ match, resolve }));
    },
  };
}

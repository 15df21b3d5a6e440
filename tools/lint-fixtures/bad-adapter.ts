// Deliberately breaks the boundary; linted by packages/session-context/test/lint-boundary.test.ts.
import { AsyncLocalStorage } from "node:async_hooks";
import { simpleGit } from "simple-git";
import { SessionDB } from "@openprogram/session-context/store";
import { HistoryFiles } from "@openprogram/session-context/dist/store/history.js";
import { sessionContext } from "../../packages/session-context/src/index.js";

const storage = new AsyncLocalStorage<{ sessionId: string }>();
storage.enterWith({ sessionId: "inline" });

export const leaks = [simpleGit, SessionDB, HistoryFiles, sessionContext];

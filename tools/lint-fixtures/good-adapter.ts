// Respects the boundary; linted by packages/session-context/test/lint-boundary.test.ts.
import { sessionContext, type SessionDB } from "@openprogram/session-context";
import { openStore } from "@openprogram/session-context/store";
import { createTempStore } from "@openprogram/session-context/testing";

export async function handleTurn(db: SessionDB = openStore()): Promise<string> {
  return sessionContext({ db, source: "web" }, (session) => session.sessionId);
}

export const helpers = [createTempStore];

import {
  deleteSession,
  describeSession,
  listSessions,
  sessionExists,
  SessionNotFoundError,
  toOpenProgramError,
  type ErrorCode,
  type SessionDB,
} from "@openprogram/session-context";
import type { Client } from "./client.js";
import type { DeltaRelay } from "./delta-relay.js";
import { NoRunningTurnError } from "./errors.js";
import type { EventLogger } from "./logging.js";
import { parseClientFrame } from "./parse-frame.js";
import type { ProgramRegistry } from "./programs.js";
import type { ClientFrame } from "./protocol.js";
import type { Subscriptions } from "./subscriptions.js";
import type { Turns } from "./turns.js";
import type { WebAsker } from "./web-asker.js";

/** What answering frames needs. */
export interface FrameHandlerDependencies {
  db: SessionDB;
  turns: Turns;
  asker: WebAsker;
  subscriptions: Subscriptions;
  deltas: DeltaRelay;
  programs: ProgramRegistry;
  log: EventLogger;
}

/**
 * Answers the frames of every connection. Anything wrong with a frame, or
 * anything it asks for that cannot be done, becomes an `error` frame to that
 * client; the connection stays usable and nothing is thrown.
 */
export class FrameHandler {
  constructor(private readonly deps: FrameHandlerDependencies) {}

  /** Handles one WebSocket message. Never rejects. */
  async receive(client: Client, data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): Promise<void> {
    if (isBinary) {
      this.reject(
        client,
        "invalid_input" satisfies ErrorCode,
        "Binary frames are not part of the protocol; send JSON as a text frame.",
      );
      return;
    }
    const parsed = parseClientFrame(textOf(data));
    if (!parsed.ok) {
      this.reject(client, parsed.error.code, parsed.error.message, parsed.ref, parsed.action);
      return;
    }
    try {
      await this.handle(client, parsed.frame);
    } catch (caught) {
      const error = toOpenProgramError(caught);
      if (error.code === ("internal_error" satisfies ErrorCode)) {
        this.deps.log.error("frame_failed", {
          client: client.id,
          action: parsed.frame.type,
          error_code: error.code,
          message: error.message,
        });
      }
      this.reject(client, error.code, error.message, parsed.frame.client_msg_id, parsed.frame.type);
    }
  }

  private async handle(client: Client, frame: ClientFrame): Promise<void> {
    const { db, turns, asker, subscriptions, programs } = this.deps;
    switch (frame.type) {
      case "chat":
      case "run":
        turns.start(client, frame);
        return;
      case "answer":
        asker.answer(frame.question_id, frame.value);
        return;
      case "decline":
        asker.decline(frame.question_id, frame.reason);
        return;
      case "stop":
        if (!turns.stop(frame.session_id, "stopped by a client")) throw new NoRunningTurnError(frame.session_id);
        this.deps.log.info("turn_stop_requested", { client: client.id, session_id: frame.session_id });
        return;
      case "subscribe": {
        const record = await db.getSession(frame.session_id);
        if (!record)
          throw new SessionNotFoundError(
            frame.session_id,
            "Start it with a chat or run frame carrying this session_id.",
          );
        subscriptions.subscribe(client, frame.session_id);
        client.send({
          type: "subscribed",
          session_id: frame.session_id,
          status: record.status,
          busy: turns.isBusy(frame.session_id),
        });
        for (const question of asker.pendingFor(frame.session_id)) client.send(question);
        // Replies streaming now: the text so far, then (as a subscriber) the same frames as everyone.
        for (const delta of this.deps.deltas.catchUp(frame.session_id)) client.send(delta);
        return;
      }
      case "unsubscribe":
        subscriptions.unsubscribe(client, frame.session_id);
        client.send({ type: "unsubscribed", session_id: frame.session_id });
        return;
      case "list_sessions":
        client.send({ type: "sessions", sessions: await listSessions({ db, ...pick(frame, "limit", "offset") }) });
        return;
      case "get_session": {
        const detail = await describeSession(frame.session_id, { db });
        client.send({
          type: "session_detail",
          session_id: frame.session_id,
          session: detail.record,
          meta: detail.meta,
          conversation: detail.conversation,
          nodes: detail.nodes,
          problems: detail.problems,
          busy: turns.isBusy(frame.session_id),
        });
        return;
      }
      case "delete_session": {
        // No turn starts here while the session is removed; the core refuses while any process runs a turn in it.
        await turns.whileDeleting(frame.session_id, async () => {
          if (!(await sessionExists(frame.session_id, { db }))) throw new SessionNotFoundError(frame.session_id);
          await deleteSession(frame.session_id, { db });
        });
        const deleted = { type: "session_deleted", session_id: frame.session_id } as const;
        subscriptions.publish(frame.session_id, deleted);
        if (!subscriptions.isSubscribed(client, frame.session_id)) client.send(deleted);
        subscriptions.dropSession(frame.session_id);
        this.deps.log.info("session_deleted", { client: client.id, session_id: frame.session_id });
        return;
      }
      case "list_programs":
        client.send({ type: "programs", programs: programs.list() });
        return;
    }
  }

  private reject(client: Client, code: string, message: string, ref?: string, action?: string): void {
    client.send({
      type: "error",
      code,
      message,
      ...(ref !== undefined ? { ref } : {}),
      ...(action !== undefined ? { action } : {}),
    });
    this.deps.log.warn("frame_rejected", {
      client: client.id,
      ...(action !== undefined ? { action } : {}),
      error_code: code,
    });
  }
}

function textOf(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

function pick<T extends object, K extends keyof T>(value: T, ...keys: K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked;
}

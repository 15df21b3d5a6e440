import {
  SessionNotFoundError,
  toOpenProgramError,
  type Budgets,
  type ErrorCode,
  type SessionDB,
} from "@openprogram/session-context";
import {
  archiveSession,
  describeModelCalls,
  withLiveStatus,
  type RecordedModelCall,
} from "@openprogram/session-context/store";
import { tracesErrorMessages } from "@openprogram/session-context/telemetry";
import { prepareResume, routeAnswer } from "@openprogram/session-context/turns";
import type { Client } from "./client.js";
import { answerCompactFrame } from "./compact-frame.js";
import type { DeltaRelay } from "./delta-relay.js";
import { NoRunningTurnError, QuestionSessionMismatchError, UnknownQuestionError } from "./errors.js";
import type { EventLogger } from "./logging.js";
import { handleBranchFrame } from "./branch-frames.js";
import type { HeavyRequests } from "./heavy-requests.js";
import { parseClientFrame } from "./parse-frame.js";
import type { ProgramRegistry } from "./programs.js";
import type { AnswerFrame, ClientFrame, ModelCallInfo } from "./protocol.js";
import { sessionDetailFrame } from "./session-detail.js";
import { latestTurn, questionFrameOf } from "./stopped-turns.js";
import type { Subscriptions } from "./subscriptions.js";
import type { Turns } from "./turns.js";
import type { WebAsker } from "./web-asker.js";
import type { Cluster } from "./cluster/cluster.js";
import type { McpServerChoices } from "./mcp-servers.js";

/** What answering frames needs. */
export interface FrameHandlerDependencies {
  db: SessionDB;
  turns: Turns;
  asker: WebAsker;
  subscriptions: Subscriptions;
  deltas: DeltaRelay;
  programs: ProgramRegistry;
  log: EventLogger;
  /** In a cluster: frames for turns running on another replica are forwarded there. */
  cluster: Cluster | null;
  /** Bounds the requests that read a whole session, per connection and across the server. */
  heavy: HeavyRequests;
  /** The MCP servers a chat turn may enable (absent: none). */
  mcp?: McpServerChoices;
  /** Every turn's budgets: `session_detail` shows them beside the session's spending (null: none). */
  budgets?: Budgets | null;
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
          // One policy with the spans: a message may quote a prompt, so it is logged only on request.
          ...(tracesErrorMessages() ? { message: error.message } : {}),
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
      case "answer": {
        // The pair is checked wherever the question waits: an answer never reaches another session's question.
        const owner = this.questionOwner(frame.question_id, frame.session_id);
        if (asker.sessionOf(frame.question_id) !== undefined) {
          asker.answer(frame.question_id, frame.value, frame.session_id);
          this.confirmClosed(client, owner, frame.question_id, "answered");
          return;
        }
        const remote = await this.remoteRunner(owner ?? frame.session_id);
        if (remote !== null) {
          await remote.cluster.forward(remote.replica, {
            type: "answer",
            ...(frame.session_id !== undefined ? { session_id: frame.session_id } : {}),
            question_id: frame.question_id,
            value: frame.value,
          });
          this.confirmClosed(client, owner ?? frame.session_id, frame.question_id, "answered");
          return;
        }
        if (frame.session_id === undefined) throw new UnknownQuestionError(frame.question_id, true);
        await this.answerElsewhere(client, { ...frame, session_id: frame.session_id });
        return;
      }
      case "resume":
        await turns.resume(client, {
          sessionId: frame.session_id,
          clientMsgId: frame.client_msg_id,
          prepare: () =>
            prepareResume({
              sessionId: frame.session_id,
              db,
              resolveProgram: programs.resolveProgram,
              ...(frame.turn_id !== undefined ? { turnId: frame.turn_id } : {}),
            }),
        });
        this.deps.log.info("turn_resume_requested", { client: client.id, session_id: frame.session_id });
        return;
      case "decline": {
        const owner = this.questionOwner(frame.question_id, frame.session_id);
        const remote =
          asker.sessionOf(frame.question_id) === undefined ? await this.remoteRunner(owner ?? frame.session_id) : null;
        if (remote !== null)
          await remote.cluster.forward(remote.replica, {
            type: "decline",
            ...(frame.session_id !== undefined ? { session_id: frame.session_id } : {}),
            question_id: frame.question_id,
            ...(frame.reason !== undefined ? { reason: frame.reason } : {}),
          });
        else asker.decline(frame.question_id, frame.reason, frame.session_id);
        this.confirmClosed(client, owner ?? frame.session_id, frame.question_id, "declined");
        return;
      }
      case "stop": {
        if (!turns.stop(frame.session_id, "stopped by a client")) {
          const remote = await this.remoteRunner(frame.session_id);
          if (remote === null) throw new NoRunningTurnError(frame.session_id);
          await remote.cluster.forward(remote.replica, { type: "stop", session_id: frame.session_id });
        }
        this.deps.log.info("turn_stop_requested", { client: client.id, session_id: frame.session_id });
        return;
      }
      case "subscribe": {
        const record = await db.getSession(frame.session_id);
        if (!record)
          throw new SessionNotFoundError(
            frame.session_id,
            "Start it with a chat or run frame carrying this session_id.",
          );
        const elsewhere = (await this.remoteRunner(frame.session_id)) !== null;
        // From here on synchronous: what the catch-up sends and the frames that follow it never overlap.
        const mirror = this.deps.cluster?.mirror;
        subscriptions.subscribe(client, frame.session_id);
        client.send({
          type: "subscribed",
          session_id: frame.session_id,
          status: record.status,
          busy: turns.isBusy(frame.session_id) || elsewhere,
        });
        const pending = [...asker.pendingFor(frame.session_id), ...(mirror?.pendingFor(frame.session_id) ?? [])];
        for (const question of pending) client.send(question);
        // A question of a turn that is not running (asked before a restart, or by a CLI run) waits on disk. One of a
        // turn running on another replica comes through the channel (now, or as soon as it arrives there).
        if (pending.length === 0 && !turns.isBusy(frame.session_id) && !elsewhere) {
          const stored = questionFrameOf(latestTurn(db, frame.session_id));
          if (stored) client.send(stored);
        }
        // Replies streaming now (here or on another replica): the text so far, then the same frames as everyone.
        for (const delta of this.deps.deltas.catchUp(frame.session_id)) client.send(delta);
        for (const delta of mirror?.catchUp(frame.session_id) ?? []) client.send(delta);
        return;
      }
      case "unsubscribe":
        subscriptions.unsubscribe(client, frame.session_id);
        client.send({ type: "unsubscribed", session_id: frame.session_id });
        return;
      case "list_sessions": {
        const records = await db.listSessions({
          ...pick(frame, "limit", "offset"),
          includeArchived: frame.include_archived === true,
        });
        // A `running` session nobody holds (its process died) is listed as interrupted: resumable.
        const heldElsewhere = async (sessionId: string): Promise<boolean> =>
          turns.isBusy(sessionId) || (await this.remoteRunner(sessionId)) !== null;
        client.send({ type: "sessions", sessions: await withLiveStatus(records, { db, heldElsewhere }) });
        return;
      }
      case "get_session": {
        const busy = turns.isBusy(frame.session_id) || (await this.remoteRunner(frame.session_id)) !== null;
        const page = {
          ...(frame.limit !== undefined ? { limit: frame.limit } : {}),
          ...(frame.before_seq !== undefined ? { beforeSeq: frame.before_seq } : {}),
        };
        // Built and sent inside the slot: the page is let go before the next read of a big session starts.
        await this.deps.heavy.run(client, async () =>
          client.send(await sessionDetailFrame(db, frame.session_id, busy, page, this.deps.budgets ?? null)),
        );
        return;
      }
      case "get_calls": {
        await this.deps.heavy.run(client, async () => {
          const calls = await describeModelCalls(frame.session_id, { db });
          client.send({ type: "calls", session_id: frame.session_id, calls: calls.map(callInfo) });
        });
        return;
      }
      case "delete_session": {
        // No turn starts here while the session is removed; the core refuses while any process runs a turn in it.
        await turns.whileDeleting(frame.session_id, async () => {
          if (!(await db.deleteSession(frame.session_id))) throw new SessionNotFoundError(frame.session_id);
        });
        const deleted = { type: "session_deleted", session_id: frame.session_id } as const;
        subscriptions.publish(frame.session_id, deleted);
        if (!subscriptions.isSubscribed(client, frame.session_id)) client.send(deleted);
        subscriptions.dropSession(frame.session_id);
        this.deps.log.info("session_deleted", { client: client.id, session_id: frame.session_id });
        return;
      }
      case "archive_session": {
        const record = await archiveSession(frame.session_id, { db, archived: frame.archived !== false });
        const archived = { type: "session_archived", session_id: frame.session_id, archived: record.archived } as const;
        subscriptions.publish(frame.session_id, archived);
        if (!subscriptions.isSubscribed(client, frame.session_id)) client.send(archived);
        this.deps.log.info("session_archived", {
          client: client.id,
          session_id: frame.session_id,
          archived: record.archived,
        });
        return;
      }
      case "compact":
        await answerCompactFrame(this.deps, client, frame);
        return;
      case "list_programs":
        client.send({ type: "programs", programs: programs.list() });
        return;
      case "list_mcp_servers":
        client.send({ type: "mcp_servers", servers: this.deps.mcp?.list() ?? [] });
        return;
      case "list_branches":
        await this.deps.heavy.run(client, () => handleBranchFrame(this.deps, client, frame));
        return;
      case "checkout":
      case "name_branch":
        await handleBranchFrame(this.deps, client, frame);
        return;
    }
  }

  /**
   * The session whose turn waits for the question (here or, in a cluster, on
   * another replica), undefined when none does. A `session_id` sent with the
   * frame must be that session: QuestionSessionMismatchError otherwise.
   */
  private questionOwner(questionId: string, sent: string | undefined): string | undefined {
    const owner = this.deps.asker.sessionOf(questionId) ?? this.deps.cluster?.mirror.sessionOfQuestion(questionId);
    if (owner !== undefined && sent !== undefined && owner !== sent)
      throw new QuestionSessionMismatchError(questionId, sent);
    return owner;
  }

  /**
   * Every frame gets a reply: subscribers of the session hear `question_closed`
   * from the turn itself; a sender that is not subscribed is told here.
   */
  private confirmClosed(
    client: Client,
    sessionId: string | undefined,
    questionId: string,
    outcome: "answered" | "declined",
  ): void {
    if (sessionId === undefined || this.deps.subscriptions.isSubscribed(client, sessionId)) return;
    client.send({ type: "question_closed", session_id: sessionId, question_id: questionId, outcome });
  }

  /** In a cluster, the other replica whose turn holds the session now; null when none does (or not clustered). */
  private async remoteRunner(sessionId: string | undefined): Promise<{ cluster: Cluster; replica: string } | null> {
    const { cluster } = this.deps;
    if (!cluster || sessionId === undefined) return null;
    const replica = await cluster.runningElsewhere(sessionId);
    return replica === null ? null : { cluster, replica };
  }

  /**
   * An answer to a question no turn of this dispatcher waits for, routed by
   * the core: to the live process that waits for it (a CLI run), which
   * continues; or, when its process is gone, into a resume of the turn here
   * by replay with the answer filled in.
   */
  private async answerElsewhere(client: Client, frame: AnswerFrame & { session_id: string }): Promise<void> {
    const { db, turns, subscriptions, programs, log } = this.deps;
    const sessionId = frame.session_id;
    await turns.resume(client, {
      sessionId,
      clientMsgId: frame.client_msg_id,
      prepare: async () => {
        const route = await routeAnswer({
          sessionId,
          db,
          value: frame.value,
          questionId: frame.question_id,
          resolveProgram: programs.resolveProgram,
        });
        if (route.kind === "resume") return route.prepared;
        const closed = {
          type: "question_closed",
          session_id: sessionId,
          question_id: route.answered.questionId,
          outcome: "answered",
        } as const;
        subscriptions.publish(sessionId, closed);
        if (!subscriptions.isSubscribed(client, sessionId)) client.send(closed);
        log.info("answer_delivered", { client: client.id, session_id: sessionId, turn_id: route.answered.turnId });
        return null;
      },
    });
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

function callInfo(call: RecordedModelCall): ModelCallInfo {
  return {
    node_id: call.nodeId,
    caller_name: call.callerName,
    model: call.model,
    provider: call.provider,
    status: call.status,
    system: call.system,
    messages: call.messages,
    reply: call.reply,
    usage: call.usage,
    duration_seconds: call.durationSeconds,
    prompt_sha256: call.promptSha256,
    verified: call.verified,
  };
}

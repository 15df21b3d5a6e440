import type { DeltaFrame, QuestionFrame, ServerFrame } from "../protocol.js";

/** What a remote turn has open now: its waiting questions and its replies' text so far. */
interface RemoteSession {
  questions: Map<string, QuestionFrame>;
  /** node id → text streamed so far. */
  streams: Map<string, string>;
}

/**
 * The state of turns running on other replicas, kept from their frames as
 * they pass, so that a client subscribing here gets the same re-delivery as
 * on the replica running the turn: the pending questions, then the text so
 * far of each reply streaming now.
 */
export class RemoteTurnMirror {
  private readonly sessions = new Map<string, RemoteSession>();

  /** Follows one frame of a remote session. */
  observe(sessionId: string, frame: ServerFrame): void {
    switch (frame.type) {
      case "question":
        this.session(sessionId).questions.set(frame.question_id, frame);
        return;
      case "question_closed":
        this.sessions.get(sessionId)?.questions.delete(frame.question_id);
        this.forgetIfEmpty(sessionId);
        return;
      case "delta": {
        const streams = this.session(sessionId).streams;
        streams.set(frame.node_id, (streams.get(frame.node_id) ?? "") + frame.text);
        return;
      }
      case "node":
        if (frame.op === "update" && frame.node.role === "llm") {
          this.sessions.get(sessionId)?.streams.delete(frame.node.id);
          this.forgetIfEmpty(sessionId);
        }
        return;
      case "turn_done":
      case "turn_failed":
      case "session_deleted":
        this.sessions.delete(sessionId);
        return;
      default:
        return;
    }
  }

  /** Forgets what was followed of the session (it may be stale after a channel outage). */
  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** The session a waiting remote question belongs to. */
  sessionOfQuestion(questionId: string): string | undefined {
    for (const [sessionId, session] of this.sessions) if (session.questions.has(questionId)) return sessionId;
    return undefined;
  }

  /** Waiting questions of the session's remote turn. */
  pendingFor(sessionId: string): QuestionFrame[] {
    return [...(this.sessions.get(sessionId)?.questions.values() ?? [])];
  }

  /** One delta frame per reply streaming now, with its text so far. */
  catchUp(sessionId: string): DeltaFrame[] {
    const streams = this.sessions.get(sessionId)?.streams ?? new Map<string, string>();
    return [...streams].map(([nodeId, text]) => ({ type: "delta", session_id: sessionId, node_id: nodeId, text }));
  }

  private session(sessionId: string): RemoteSession {
    let session = this.sessions.get(sessionId);
    if (!session) this.sessions.set(sessionId, (session = { questions: new Map(), streams: new Map() }));
    return session;
  }

  private forgetIfEmpty(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (session && session.questions.size === 0 && session.streams.size === 0) this.sessions.delete(sessionId);
  }
}

import type { EventLogger } from "../logging.js";
import type { DeltaFrame, QuestionFrame, ServerFrame } from "../protocol.js";
import type { ClusterBus } from "./bus.js";
import type { RemoteTurnMirror } from "./mirror.js";

/** What a resync needs from the dispatcher. */
export interface ResyncSide {
  /** Sessions with subscribers here whose turn (if any) does not run here: their frames come through the channel. */
  watched(): string[];
  /**
   * Re-syncs the session's subscribers here: sends `resync` at once (before its first await), then the
   * `session_detail` snapshot, then the question waiting on disk when no turn of it runs anywhere.
   */
  resync(sessionId: string, reason: string, runningElsewhere: boolean): Promise<void>;
  /** The live state of a turn of the session running here (its pending questions and text so far), or null. */
  liveState(sessionId: string): { questions: QuestionFrame[]; deltas: DeltaFrame[] } | null;
  /** Sends a frame to the session's subscribers here. */
  deliver(sessionId: string, frame: ServerFrame): void;
}

/**
 * Frames published while a replica's event channel is down are lost: those it
 * should have received (its LISTEN connection was gone) and those it sent. So
 * when its channel comes back, the replica re-syncs its subscribers of every
 * session it watches, and tells the others which sessions' frames it could not
 * send, so they re-sync theirs. A re-sync sends the snapshot from the shared
 * store and asks the replica running the session's turn for what the store does
 * not hold yet (pending questions, text streamed so far); until that answer
 * comes, deltas of the session are dropped, since the answer includes them.
 */
export class ChannelResync {
  /** Sessions whose frames this replica could not send while its channel was down. */
  private readonly unsent = new Set<string>();
  /** Sessions waiting for their owner's live state: deltas dropped meanwhile. */
  private readonly holding = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly bus: ClusterBus,
    private readonly mirror: RemoteTurnMirror,
    private readonly log: EventLogger,
    private readonly ownerOf: (sessionId: string) => Promise<string | null>,
    private readonly holdMs: number,
  ) {}

  /** A message the channel could not send. */
  dropped(message: { k?: unknown; s?: unknown }): void {
    if (message.k === "f" && typeof message.s === "string") this.unsent.add(message.s);
  }

  /** The channel reconnected after an outage. */
  async channelBack(side: ResyncSide): Promise<void> {
    const unsent = [...this.unsent];
    this.unsent.clear();
    if (unsent.length > 0) this.bus.send({ k: "missed", s: unsent });
    await this.resync(side, side.watched(), "this replica's event channel to the database was down");
  }

  /** Another replica's channel was down: frames of these sessions it published may not have arrived. */
  async missedBy(side: ResyncSide, replica: string, sessions: string[]): Promise<void> {
    const watched = new Set(side.watched());
    await this.resync(
      side,
      sessions.filter((sessionId) => watched.has(sessionId)),
      `the event channel of replica ${replica} was down`,
    );
  }

  /** Whether a relayed delta of the session is to be dropped (its owner's catch-up will carry it). */
  isHeld(sessionId: string): boolean {
    return this.holding.has(sessionId);
  }

  /** A replica asks for the live state of a turn running here. */
  answerSync(side: ResyncSide, from: string, sessionId: string): void {
    const state = side.liveState(sessionId);
    this.bus.send({
      k: "state",
      to: from,
      s: sessionId,
      q: state?.questions ?? [],
      d: state?.deltas ?? [],
      // No turn of the session runs here any more: its lease may outlive it (a release that could not reach the
      // database expires instead), so the asker's snapshot may have said busy.
      live: state !== null,
    });
  }

  /**
   * The owner's live state, asked for by a resync: the questions and text so far, then the deltas that follow.
   * When the owner runs no turn of the session any more (`live` false), the snapshot sent as busy is sent again.
   */
  receiveState(
    side: ResyncSide,
    sessionId: string,
    questions: QuestionFrame[],
    deltas: DeltaFrame[],
    live: boolean,
  ): void {
    this.release(sessionId);
    if (!live) {
      void side
        .resync(sessionId, "the turn on its replica ended while frames were missed", false)
        .catch((error: Error) =>
          this.log.warn("cluster_resync_failed", { session_id: sessionId, message: error.message }),
        );
      return;
    }
    const known = new Set(this.mirror.pendingFor(sessionId).map((question) => question.question_id));
    for (const question of questions) {
      if (known.has(question.question_id)) continue;
      this.mirror.observe(sessionId, question);
      side.deliver(sessionId, question);
    }
    for (const delta of deltas) {
      this.mirror.observe(sessionId, delta);
      side.deliver(sessionId, delta);
    }
  }

  private async resync(side: ResyncSide, sessions: string[], reason: string): Promise<void> {
    if (sessions.length === 0) return;
    this.log.warn("cluster_resync", {
      sessions: sessions.length,
      session_ids: sessions.slice(0, 20),
      reason,
      hint: "frames of these sessions may have been missed: their subscribers here were sent the session again",
    });
    for (const sessionId of sessions) {
      const owner = await this.ownerOf(sessionId).catch(() => null);
      // What this replica followed of the remote turn may be stale: the owner's answer replaces it.
      this.mirror.forget(sessionId);
      if (owner !== null) {
        this.hold(sessionId);
        this.bus.send({ k: "sync", to: owner, s: sessionId });
      }
      await side
        .resync(sessionId, reason, owner !== null)
        .catch((error: Error) =>
          this.log.warn("cluster_resync_failed", { session_id: sessionId, message: error.message }),
        );
    }
  }

  private hold(sessionId: string): void {
    this.release(sessionId);
    const timer = setTimeout(() => this.holding.delete(sessionId), this.holdMs);
    timer.unref();
    this.holding.set(sessionId, timer);
  }

  private release(sessionId: string): void {
    const timer = this.holding.get(sessionId);
    if (timer) clearTimeout(timer);
    this.holding.delete(sessionId);
  }
}

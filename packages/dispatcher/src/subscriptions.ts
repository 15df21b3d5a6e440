import type { Client } from "./client.js";
import { encodeFrame, type ServerFrame } from "./protocol.js";

/** Which clients receive which session's events: the clients of that session only. */
export class Subscriptions {
  private readonly bySession = new Map<string, Set<Client>>();
  private readonly byClient = new Map<Client, Set<string>>();
  /** In a cluster: also sends each published frame to the other replicas (whose subscribers get it by `deliver`). */
  relay: ((sessionId: string, frame: ServerFrame) => void) | null = null;

  /** The client receives the session's events from now on. */
  subscribe(client: Client, sessionId: string): void {
    let clients = this.bySession.get(sessionId);
    if (!clients) this.bySession.set(sessionId, (clients = new Set()));
    clients.add(client);
    let sessions = this.byClient.get(client);
    if (!sessions) this.byClient.set(client, (sessions = new Set()));
    sessions.add(sessionId);
  }

  /** The client stops receiving the session's events. */
  unsubscribe(client: Client, sessionId: string): void {
    const clients = this.bySession.get(sessionId);
    clients?.delete(client);
    if (clients?.size === 0) this.bySession.delete(sessionId);
    const sessions = this.byClient.get(client);
    sessions?.delete(sessionId);
    if (sessions?.size === 0) this.byClient.delete(client);
  }

  /** True when the client receives the session's events. */
  isSubscribed(client: Client, sessionId: string): boolean {
    return this.bySession.get(sessionId)?.has(client) ?? false;
  }

  /** Forgets a disconnected client. */
  dropClient(client: Client): void {
    for (const sessionId of this.byClient.get(client) ?? []) {
      const clients = this.bySession.get(sessionId);
      clients?.delete(client);
      if (clients?.size === 0) this.bySession.delete(sessionId);
    }
    this.byClient.delete(client);
  }

  /** Forgets a deleted session. */
  dropSession(sessionId: string): void {
    for (const client of this.bySession.get(sessionId) ?? []) this.unsubscribe(client, sessionId);
  }

  /** Sends the frame to every client of the session (encoded once), here and on the cluster's other replicas. */
  publish(sessionId: string, frame: ServerFrame): void {
    this.relay?.(sessionId, frame);
    this.deliver(sessionId, frame);
  }

  /** Sends the frame to this dispatcher's clients of the session only (a frame relayed from another replica). */
  deliver(sessionId: string, frame: ServerFrame): void {
    const clients = this.bySession.get(sessionId);
    if (!clients || clients.size === 0) return;
    const text = encodeFrame(frame);
    for (const client of clients) client.sendEncoded(text);
  }

  /** The sessions with at least one client here. */
  sessionIds(): string[] {
    return [...this.bySession.keys()];
  }

  /** Number of sessions with at least one client (for tests and metrics). */
  get sessionCount(): number {
    return this.bySession.size;
  }
}

// What the streaming benchmark and its server child share. A module of its own, with no side effects: the bench
// once imported scriptedReply from streaming-server.ts, whose top level starts a dispatcher, so the bench process
// itself ran one that nothing closed, and `pnpm bench` never exited after printing its figures.

/** Messages from the load generator. */
export type StreamingChildRequest = { cmd: "usage" } | { cmd: "broadcast"; frames: string[] } | { cmd: "exit" };

/** The server's CPU time (µs, user + system) and RSS (bytes) now. */
export interface Usage {
  cpuMicros: number;
  rss: number;
}

/** The reply each scripted chat streams: `tokens` numbered tokens. */
export function scriptedReply(tokens: number): string[] {
  return Array.from({ length: tokens }, (_, index) => `t${index} `);
}

import { WebSocket } from "ws";

/**
 * One bench client over a WebSocket: `turns` chat turns, each ended by turn_done, in one session it continues
 * (`newSessions`: a new session every turn). Each turn's latency (send -> turn_done, ms) is pushed to `latencies`.
 */
export async function runChatClient(
  port: number,
  turns: number,
  options: { newSessions: boolean; latencies?: number[] },
): Promise<void> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false });
  await new Promise((done, fail) => socket.once("open", done).once("error", fail));
  let sessionId: string | undefined;
  for (let turn = 0; turn < turns; turn++) {
    const started = performance.now();
    await new Promise<void>((done, fail) => {
      const onMessage = (data: Buffer): void => {
        const frame = JSON.parse(data.toString("utf8")) as { type: string; session_id?: string };
        if (frame.type === "session") sessionId = frame.session_id;
        if (frame.type === "turn_done") {
          socket.off("message", onMessage);
          done();
        } else if (frame.type === "turn_failed" || frame.type === "error") fail(new Error(JSON.stringify(frame)));
      };
      socket.on("message", onMessage);
      const session = !options.newSessions && sessionId ? { session_id: sessionId } : {};
      socket.send(JSON.stringify({ type: "chat", text: `message ${turn}`, ...session }));
    });
    options.latencies?.push(performance.now() - started);
  }
  socket.close();
}

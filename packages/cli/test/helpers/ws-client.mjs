// A WebSocket client for the serve tests, on Node's built-in WebSocket
// (run with --experimental-websocket on Node 20). argv[2] is a JSON plan:
// { "url": "ws://...", "steps": [{ "send": {...frame}, "until": ["type", ...] }], "timeoutMs": n }
// Each step sends its frame and waits for a frame whose type is in `until`.
// Every frame received is printed on stdout as one JSON line.
const plan = JSON.parse(process.argv[2]);
const timer = setTimeout(() => {
  process.stderr.write(`ws-client: timed out after ${plan.timeoutMs} ms\n`);
  process.exit(3);
}, plan.timeoutMs ?? 60_000);

const socket = new WebSocket(plan.url);
const received = [];
let waiting = null;
socket.addEventListener("message", (event) => {
  const frame = JSON.parse(String(event.data));
  received.push(frame);
  process.stdout.write(`${JSON.stringify(frame)}\n`);
  if (waiting && waiting.types.includes(frame.type)) {
    const wake = waiting.resolve;
    waiting = null;
    wake();
  }
});
socket.addEventListener("error", () => {
  process.stderr.write("ws-client: socket error\n");
  process.exit(4);
});
await new Promise((resolve) => socket.addEventListener("open", resolve, { once: true }));
for (const step of plan.steps) {
  const done = new Promise((resolve) => (waiting = { types: step.until, resolve }));
  socket.send(JSON.stringify(step.send));
  await done;
}
clearTimeout(timer);
socket.close();
process.exit(0);

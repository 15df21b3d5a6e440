// The floor of our store's layout: the bare SDK's four calls plus only the file operations our store cannot do
// without at its durability (Python's layout, one file per node, the session's write-ahead log), made the cheapest
// way (synchronous calls, no locks, no cache, no events) and with no git commit at all. Not a product: a bound.
// Where this variant is slower than a peer, no implementation of this layout can be faster than that peer here.
import { closeSync, constants, fdatasyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { AGENT_DOC, MODEL, STEPS, stepMessages, stepPrompt, streamChat } from "../lib/agent-turn.mjs";

/** The floor's one variant. */
export function layoutFloorVariants() {
  return [
    {
      id: "layout-floor",
      peer: "our layout's file operations alone (a bound, not a product)",
      durability: "equal",
      setting:
        "per step a running and a completed node file (temp file, rename), the completed one's text appended to the write-ahead log and fdatasynced; the call's node and meta.json at the turn's end, one more fdatasync; no git commit",
      resumes: false,
      open: openFloor,
    },
  ];
}

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

async function openFloor({ baseUrl, dir }) {
  const client = new OpenAI({ baseURL: baseUrl, apiKey: "bench" });
  const sessions = new Map();
  const folderOf = (session) => {
    let folder = sessions.get(session);
    if (!folder) {
      folder = { root: join(dir, "floor", session), seq: 0 };
      mkdirSync(join(folder.root, "history"), { recursive: true, mode: 0o700 });
      mkdirSync(join(folder.root, ".state"), { mode: 0o700 });
      sessions.set(session, folder);
    }
    return folder;
  };
  // A node file as our store writes one: a temp file in the same folder, renamed over the name.
  const writeFile = (path, text) => {
    const temporary = `${path}.tmp`;
    const fd = openSync(temporary, "w", 0o600);
    writeSync(fd, text);
    closeSync(fd);
    renameSync(temporary, path);
  };
  const logDurably = (folder, texts) => {
    const fd = openSync(join(folder.root, ".state", "wal"), APPEND, 0o600);
    writeSync(fd, texts.join("\n"));
    fdatasyncSync(fd);
    closeSync(fd);
  };
  const node = (folder, role, id, fields) => {
    const seq = (folder.seq += 1);
    const text = JSON.stringify({ id, created_at: Date.now() / 1000, seq, role, name: MODEL, ...fields });
    return { path: join(folder.root, "history", `${String(seq).padStart(4, "0")}-${role[0]}-${id}.json`), text };
  };
  return {
    async runTurn(session, turn) {
      const folder = folderOf(session);
      const call = node(folder, "code", `c${turn}`, {
        input: { session, turn },
        output: null,
        metadata: { status: "running" },
      });
      writeFile(call.path, call.text);
      const steps = [];
      for (let step = 1; step <= STEPS; step += 1) {
        const running = node(folder, "llm", `l${turn}_${step}`, {
          output: null,
          caller: `c${turn}`,
          metadata: { status: "running" },
        });
        writeFile(running.path, running.text);
        const reply = await streamChat(client, stepMessages(session, turn, step, steps));
        const done = JSON.stringify({
          ...JSON.parse(running.text),
          output: reply,
          metadata: { status: "completed", doc: AGENT_DOC },
        });
        writeFile(running.path, done);
        logDurably(folder, [done]);
        steps.push({ prompt: stepPrompt(session, turn, step), reply });
      }
      const callDone = JSON.stringify({
        ...JSON.parse(call.text),
        output: steps.map((done) => done.reply),
        metadata: { status: "completed" },
      });
      const meta = JSON.stringify({ id: session, head_id: `c${turn}`, updated_at: Date.now() / 1000 });
      writeFile(call.path, callDone);
      writeFile(join(folder.root, "meta.json"), meta);
      logDurably(folder, [callDone, meta]);
      return steps.map((done) => done.reply);
    },
    async close() {},
  };
}

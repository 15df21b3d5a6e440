// Tool-call sessions for the two-way proof against Python OpenProgram (python-tool-calls.test.ts and
// fixtures/python-tool-calls/make-fixtures.ts): the session our runtime writes, the turns that continue
// the session Python's store wrote, and the Python script that renders both with Python's own code.
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { agenticFunction, chat, sessionContext, tool, type SessionDB } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { startFakeOpenAIServer, type FakeReply, type ReceivedRequest } from "../src/testing/index.js";
import { runPythonScript } from "./python-fixtures.js";

/** The folder of the committed fixtures and the script that made them. */
export const FIXTURES = fileURLToPath(new URL("./fixtures/python-tool-calls/", import.meta.url));
/** Python OpenProgram's own code, run by the script (it imports from $OPENPROGRAM_PYTHON_SRC). */
export const PYTHON_SCRIPT = `${FIXTURES}tool_calls.py`;
/** The committed files, by what they hold. */
export const FIXTURE_FILES = {
  /** A `sessions/` folder holding the session our runtime wrote (writeTypeScriptSession). */
  typescriptSession: `${FIXTURES}typescript-session.tar.gz`,
  /** Python's render_dag_messages over the reads of that session's last llm node (`render-reads`). */
  pythonRendersTypescript: `${FIXTURES}python-renders-typescript-session.json`,
  /** A `sessions/` folder holding the session Python's own code wrote (`write-chat-session`). */
  pythonSession: `${FIXTURES}python-session.tar.gz`,
  /** What Python sends for the next turn of that session (`next-request` ... NEXT_QUESTION). */
  pythonNextRequest: `${FIXTURES}python-next-request.json`,
  /** What Python sends after our runtime continued it with NEXT_QUESTION (`next-request` ... FOLLOW_UP). */
  pythonReadsContinuation: `${FIXTURES}python-reads-continuation.json`,
} as const;

/** The session Python's script writes. */
export const PYTHON_SESSION_ID = "py_tools";
/** The turn our runtime adds to it, with a tool call. */
export const NEXT_QUESTION = "And in Rome?";
/** The turn after, whose request shows what Python reads of ours. */
export const FOLLOW_UP = "Thanks, that is all.";

/** A message as Python's script prints it (its pi-ai message, timestamps left out). */
export interface PythonMessage {
  role: "user" | "assistant" | "toolResult";
  content: Array<
    | { type: "text"; text: string }
    | { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> }
    | { type: string }
  >;
  tool_call_id?: string;
  tool_name?: string;
  is_error?: boolean;
}

/** A chat-completions message as Python's OpenAI provider builds it, or as our request body carries it. */
export type WireMessage = Record<string, unknown> & { role: string };

/** Python's render of a message list, and the wire messages its OpenAI provider makes of it. */
export interface PythonRendered {
  messages: PythonMessage[];
  openai: WireMessage[];
}

/** `render-reads`: Python's render of an llm node's reads, with tool aging on (as it ships) and off. */
export interface PythonReadsRender {
  reads: Array<{ id: string; role: string; name: string }>;
  aging_on: PythonRendered;
  aging_off: PythonRendered;
}

/** `next-request`: Python's next chat request for a session (aging on and off), and its store's view of the branch. */
export interface PythonNextRequest {
  branch: Array<{ id: string; role: string }>;
  aging_on: PythonRendered;
  aging_off: PythonRendered;
}

/** Runs the Python script with Python OpenProgram's source at `source`; its JSON output. */
export function runPython<T>(source: string, args: string[]): T {
  return runPythonScript<T>(PYTHON_SCRIPT, source, args);
}

// The session our runtime writes: a chat turn, then an agentic function that calls another one directly and
// runs a five-request tool loop (a plain tool, an agentic function as a tool, an error result, a tool returning
// an {"error": ...} value, ids the chat-completions API would not take as they are, non-ASCII arguments).

/** The city of the research, non-ASCII on purpose (arguments are written with Python's json.dumps). */
export const CITY = "Zürich";
const RESEARCH_DOC = "Research a city for a trip. Use the tools.";
const OUTLINE_DOC = "Outline what to find out about a city.";
const SUMMARIZE_DOC = "Summarise a text in a few words.";
/** An id longer than chat completions takes: Python and we send `tc_` and its hash instead. */
export const LONG_CALL_ID = `call_${"f".repeat(70)}`;

const FACTS: Record<string, () => unknown> = {
  [`weather in ${CITY}`]: () => ({ sky: "snow", celsius: -2 }),
  "museum hours": () => {
    throw new Error("The museum index is offline.");
  },
  trains: () => "Every 30 minutes from the airport.",
  hotels: () => ({ error: { code: 503, retry: true, why: "it's fully booked" } }),
  food: () => ["Fondue", "Rösti"],
};

const lookup = tool({
  name: "lookup",
  description: "Looks a fact up.",
  input: z.object({ query: z.string() }),
  execute: ({ query }) => (FACTS[query] ?? (() => "Nothing found."))(),
});

const summarize = agenticFunction(
  { name: "summarize", doc: SUMMARIZE_DOC, input: z.object({ text: z.string() }) },
  async ({ text }, { runtime }) => runtime.exec(`Text: ${text}`),
);

const outline = agenticFunction(
  { name: "outline", doc: OUTLINE_DOC, input: z.object({ city: z.string() }) },
  async ({ city }, { runtime }) => runtime.exec(`Outline the research on ${city}.`),
);

const research = agenticFunction(
  { name: "research", doc: RESEARCH_DOC, input: z.object({ city: z.string() }) },
  async ({ city }, { runtime }) => {
    await outline({ city });
    return runtime.exec(`Research ${city} for the trip.`, { tools: [lookup, summarize] });
  },
);

/** The replies of the fake model, chosen by what each request is (not by arrival order). */
function typescriptSessionReply(request: ReceivedRequest): FakeReply {
  const messages = (request.json.messages ?? []) as WireMessage[];
  const system = messages[0]?.role === "system" ? messages[0].content : null;
  if (system === null) return `Noted: a winter trip to ${CITY}.`;
  if (system === OUTLINE_DOC) return "1. weather 2. trains 3. hotels 4. food";
  if (system === SUMMARIZE_DOC) return "Cold and snowy: bring a coat.";
  const results = messages.filter((message) => message.role === "tool").length;
  const ask = (query: string, id: string) => ({ id, name: "lookup", arguments: { query } });
  switch (results) {
    case 0:
      return {
        reply: "Looking things up.",
        toolCalls: [
          ask(`weather in ${CITY}`, "call_weather"),
          ask("museum hours", "call_museum"),
          { id: "call_summary", name: "summarize", arguments: { text: "Snow, -2 C, grey skies all week." } },
        ],
      };
    case 3:
      return { toolCalls: [ask("trains", "call_trains")] };
    case 4:
      return { reply: "Hotels next.", toolCalls: [ask("hotels", "call_hotels|fc_hotels_1")] };
    case 5:
      return { toolCalls: [ask("food", LONG_CALL_ID)] };
    default:
      return `${CITY} in winter: cold and snowy, trains every 30 minutes, hotels full, eat fondue.`;
  }
}

/** What writeTypeScriptSession made. */
export interface TypeScriptSession {
  sessionId: string;
  /** Every request our runtime sent, in arrival order. */
  requests: ReceivedRequest[];
  /** The last request of the research's tool loop, and the llm node that recorded it. */
  lastLoopRequest: ReceivedRequest;
  lastLoopNodeId: string;
}

/** Writes the tool session through the runtime, the real OpenAI SDK and a fake chat-completions server. */
export async function writeTypeScriptSession(db: SessionDB): Promise<TypeScriptSession> {
  const server = await startFakeOpenAIServer(typescriptSessionReply);
  try {
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "gpt-test", maxRetries: 0 });
    const sessionId = await sessionContext({ db, runtime }, async (session) => {
      await chat(`I am planning a winter trip to ${CITY}.`);
      await research({ city: CITY });
      return session.sessionId;
    });
    const nodes = await db.loadNodes(sessionId);
    const researchNode = nodes.find((node) => node.name === "research");
    const loop = nodes.filter((node) => node.role === "llm" && node.caller === researchNode?.id);
    const last = loop[loop.length - 1];
    const lastLoopRequest = server.requests.find((request) => sha256(request.body) === last?.metadata.prompt_sha256);
    if (!last || !lastLoopRequest || loop.length !== 5)
      throw new Error(`writeTypeScriptSession: expected a loop of 5 requests, found ${loop.length}`);
    return { sessionId, requests: [...server.requests], lastLoopRequest, lastLoopNodeId: last.id };
  } finally {
    await server.close();
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

// Our runtime continuing the session Python wrote.

/** The weather tool our turn offers (the one Python's session called). */
export const weather = tool({
  name: "weather",
  description: "The weather in a city today.",
  input: z.object({ city: z.string() }),
  execute: ({ city }) => (city === "Rome" ? "Cloudy, 15 C" : "Unknown"),
});

/** Our runtime asks NEXT_QUESTION in the Python session, offering weather (the model calls it once); the requests sent. */
export function askNextQuestion(db: SessionDB): Promise<ReceivedRequest[]> {
  const asked: FakeReply = {
    reply: "Checking Rome.",
    toolCalls: [{ id: "call_weather_rome", name: "weather", arguments: { city: "Rome" } }],
  };
  return chatTurn(db, NEXT_QUESTION, [asked, "Rome is cloudy at 15 C."]);
}

/** Our runtime asks FOLLOW_UP after NEXT_QUESTION; the request sent. */
export async function askFollowUp(db: SessionDB): Promise<ReceivedRequest> {
  const [request] = await chatTurn(db, FOLLOW_UP, ["You are welcome."]);
  return request as ReceivedRequest;
}

/** One chat turn in the Python session through the real OpenAI SDK and a fake server playing `replies` in order. */
async function chatTurn(db: SessionDB, text: string, replies: FakeReply[]): Promise<ReceivedRequest[]> {
  const server = await startFakeOpenAIServer((_request, index) => replies[index] ?? "(no reply left)");
  try {
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "gpt-test", maxRetries: 0 });
    await sessionContext({ db, runtime, sessionId: PYTHON_SESSION_ID }, () => chat(text, { tools: [weather] }));
    if (server.requests.length !== replies.length)
      throw new Error(`chatTurn: ${server.requests.length} requests for ${replies.length} replies`);
    return [...server.requests];
  } finally {
    await server.close();
  }
}

// @ts-check
// The OpenProgram web page: a plain ES module, no build step. It speaks the
// dispatcher's WebSocket protocol (see the package README) and builds every
// element with textContent, so nothing a session contains can inject markup.
// Type-checked against the protocol's types (tsconfig.web.json).
import { keepConnected } from "./connection.js";
import { formatValue } from "./format-value.js";
import { formFits, readFields, renderFields } from "./input-form.js";
import { keepingOpen } from "./keep-open.js";
import { fillModelCall, modelCallBlock, showModelCalls } from "./model-calls.js";
import { showUsage } from "./usage.js";
import { showBudgets } from "./budgets.js";
import { chosenMcpServers, showMcpServers } from "./mcp-servers.js";
import { isToolNode, toolBlock } from "./tool-nodes.js";
import { createBranchView } from "./branches.js";
import { createQuestionDialog } from "./questions.js";
import { addCompactButton, compactionNote, foldSummary, summaryIdOf } from "./summary-block.js";
import {
  failureBlock,
  failureOf,
  failureText,
  formatDuration,
  formatTime,
  hasParsedOutput,
  nameElement,
  parsedBlock,
  replyValue,
  resultBlock,
  span,
  stringOf,
  text,
} from "./node-view.js";

/**
 * @typedef {import("../src/protocol.js").ServerFrame} ServerFrame
 * @typedef {import("../src/protocol.js").ClientFrame} ClientFrame
 */
/**
 * @typedef {import("../src/protocol.js").QuestionFrame} QuestionFrame
 * @typedef {import("../src/protocol.js").ProgramInfo} ProgramInfo
 */
/**
 * @typedef {import("../src/protocol.js").ModelCallInfo} ModelCallInfo
 * @typedef {import("../src/protocol.js").ResumableTurnInfo} ResumableTurnInfo
 */
/**
 * @typedef {import("../src/protocol.js").SessionDetailPage} SessionDetailPage
 * @typedef {import("../src/protocol.js").SessionsFrame["sessions"][number]} SessionRecord
 */
/**
 * @typedef {import("../src/protocol.js").FrameError} FrameError
 * @typedef {import("@openprogram/session-context").SessionNode} SessionNode
 */
/**
 * @typedef {import("./connection.js").Connection} Connection
 * @typedef {import("./connection.js").ConnectionState} ConnectionState
 */
/** @typedef {import("./branches.js").TurnStart} TurnStart */

/**
 * The elements of index.html that are more than an HTMLElement to the page, by id.
 * @typedef {{
 *   "approve-tools": HTMLInputElement,
 *   "chat-form": HTMLFormElement,
 *   "chat-input": HTMLTextAreaElement,
 *   "chat-send": HTMLButtonElement,
 *   "program-input": HTMLTextAreaElement,
 *   "program-json": HTMLDetailsElement,
 *   "program-select": HTMLSelectElement,
 *   "run-submit": HTMLButtonElement,
 *   "session-search": HTMLInputElement,
 *   "show-archived": HTMLInputElement,
 *   "token-input": HTMLInputElement,
 *   "call-tree": HTMLUListElement,
 * }} PageElements
 */

/**
 * The page's element with this id (index.html has each one the page asks for).
 * @template {string} K
 * @param {K} id
 * @returns {K extends keyof PageElements ? PageElements[K] : HTMLElement}
 */
const $ = (id) =>
  /** @type {K extends keyof PageElements ? PageElements[K] : HTMLElement} */ (
    /** @type {unknown} */ (document.getElementById(id))
  );

const state = {
  archived: false,
  /** The session list shows archived sessions too ("Archived too" box). */
  showArchived: false,
  /**
   * The kept-open connection (connection.js).
   * @type {Connection | null}
   */
  connection: null,
  /**
   * The last `sessions` list, filtered on the page by the search box.
   * @type {SessionRecord[]}
   */
  sessions: [],
  /** @type {string | null} */
  sessionId: null,
  /** @type {Map<string, SessionNode>} */
  nodes: new Map(),
  /**
   * Text of llm nodes streaming now, by node id (from delta frames).
   * @type {Map<string, string>}
   */
  streams: new Map(),
  /**
   * The last `calls` frame's calls by node id: a request block reopened after a rebuild shows them again.
   * @type {Map<string, ModelCallInfo>}
   */
  calls: new Map(),
  status: "",
  busy: false,
  /** @type {ProgramInfo[]} */
  programs: [],
  /** @type {string | null} */
  pendingNewSession: null,
  /**
   * The stopped turn a `resume` would continue (session_detail.resumable), or null.
   * @type {ResumableTurnInfo | null}
   */
  resumable: null,
  /**
   * The oldest page of nodes loaded (session_detail.page): a big session comes newest first, a page at a time.
   * @type {SessionDetailPage | null}
   */
  page: null,
  nextRef: 1,
  renderQueued: false,
  /**
   * The active summary (meta.json `_last_summary_id`): the page folds the turns it covers behind it.
   * @type {string | null}
   */
  summaryId: null,
};

// ---- connection -------------------------------------------------------------

function takeTokenFromUrl() {
  const params = new URLSearchParams(location.search);
  const token = params.get("token");
  if (token) {
    sessionStorage.setItem("openprogram.token", token);
    params.delete("token");
    replaceQuery(params);
  }
  return sessionStorage.getItem("openprogram.token");
}

/** @param {URLSearchParams} params */
function replaceQuery(params) {
  const query = params.toString();
  history.replaceState(null, "", `${location.pathname}${query ? `?${query}` : ""}`);
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  state.connection = keepConnected({
    url: `${scheme}://${location.host}/ws`,
    token: takeTokenFromUrl,
    onOpen: () => {
      $("token-form").hidden = true;
      send({ type: "list_programs" });
      send({ type: "list_mcp_servers" });
      requestSessions();
      // Subscribing again re-sends the open session's pending questions and the text so far of a streaming reply.
      state.streams = new Map();
      if (state.sessionId) openSession(state.sessionId);
    },
    onFrame: handle,
    onState: (/** @type {ConnectionState} */ kind, /** @type {string} */ text) => {
      setConnection(kind, text);
      $("token-form").hidden = kind !== "unauthorized";
      if (kind === "reconnecting" || kind === "unauthorized") disconnected();
    },
  });
}

/** While the socket is down nothing can be answered: questions go until the dispatcher sends them again. */
function disconnected() {
  setBusy(false);
  questions.forgetAll();
}

/**
 * @param {ConnectionState} kind
 * @param {string} text
 */
function setConnection(kind, text) {
  const element = $("connection");
  element.dataset.state = kind;
  element.textContent = text;
}

/**
 * Sends a frame, or says the page is not connected (false).
 * @param {ClientFrame} frame
 */
function send(frame) {
  if (!state.connection?.send(frame)) {
    showError("Not connected to the dispatcher yet; try again in a moment.");
    return false;
  }
  return true;
}

/** The session list, archived sessions too when the box says so. */
function requestSessions() {
  send({ type: "list_sessions", ...(state.showArchived ? { include_archived: true } : {}) });
}

function newRef() {
  return `page-${Date.now().toString(36)}-${state.nextRef++}`;
}

// ---- frames -----------------------------------------------------------------

/** @param {ServerFrame} frame */
function handle(frame) {
  if (branches.observe(frame)) return;
  switch (frame.type) {
    case "hello":
      return;
    case "sessions":
      return renderSessionList(frame.sessions);
    case "mcp_servers":
      return showMcpServers($("mcp-servers"), $("mcp-server-list"), frame.servers);
    case "programs":
      state.programs = frame.programs;
      return renderPrograms();
    case "session":
      if (frame.client_msg_id !== undefined && frame.client_msg_id === state.pendingNewSession) {
        state.pendingNewSession = null;
        selectSession(frame.session_id, { fresh: frame.created });
      }
      if (frame.session_id === state.sessionId) setBusy(true);
      return;
    case "node":
      if (frame.session_id !== state.sessionId) return;
      state.nodes.set(frame.node.id, frame.node);
      // The final update carries the whole output (or the partial text): the streamed copy is done.
      if (frame.op === "update" && frame.node.metadata.status !== "running") state.streams.delete(frame.node.id);
      return scheduleRender();
    case "delta":
      if (frame.session_id !== state.sessionId) return;
      state.streams.set(frame.node_id, (state.streams.get(frame.node_id) ?? "") + frame.text);
      return scheduleRender();
    case "status":
      if (frame.session_id === state.sessionId) setStatus(frame.status);
      requestSessions();
      return;
    case "question":
      return questions.ask(frame);
    case "question_closed":
      return questions.closed(frame.question_id);
    case "turn_done":
      if (frame.session_id === state.sessionId) {
        setBusy(false);
        // What a Continue would do now (nothing, usually).
        send({ type: "get_session", session_id: frame.session_id });
      }
      requestSessions();
      return;
    case "turn_failed":
      if (frame.session_id === state.sessionId) {
        setBusy(false);
        // Stopping is the user's choice, not a failure: said plainly, without the error's red.
        if (frame.error.code === "cancelled") showStopped(`Stopped: ${frame.error.message}`);
        else showError(`The turn failed: ${frame.error.message} (${errorLabel(frame.error)})`);
        // A stopped turn can be continued: ask what a Continue would resume.
        send({ type: "get_session", session_id: frame.session_id });
      }
      requestSessions();
      return;
    case "subscribed":
      if (frame.session_id === state.sessionId) {
        setStatus(frame.status);
        setBusy(frame.busy);
      }
      return;
    case "resync":
      // Frames may have been missed: what was streamed and asked is sent again, after the snapshot.
      if (frame.session_id === state.sessionId) state.streams = new Map();
      questions.forgetSession(frame.session_id);
      return scheduleRender();
    case "unsubscribed":
      return;
    case "calls":
      if (frame.session_id !== state.sessionId) return;
      state.calls = new Map(frame.calls.map((call) => [call.node_id, call]));
      showModelCalls($("call-tree"), state.calls);
      return;
    case "session_detail":
      if (frame.session_id !== state.sessionId) return;
      // An earlier page adds to what is shown; the newest page starts over.
      if (frame.page && frame.page.before_seq !== null) for (const node of frame.nodes) state.nodes.set(node.id, node);
      else state.nodes = new Map(frame.nodes.map((node) => [node.id, node]));
      showEarlierButton(frame.page ?? null);
      state.resumable = frame.resumable ?? null;
      state.summaryId = summaryIdOf(frame.meta);
      showArchived(frame.session.archived === true);
      showUsage($("usage"), frame.usage ?? null);
      showBudgets($("budgets"), $("budget-list"), frame.budgets ?? null);
      setStatus(frame.session.status);
      setBusy(frame.busy);
      return scheduleRender();
    case "compaction":
      if (frame.session_id !== state.sessionId) return;
      note(compactionNote(frame));
      if (frame.phase === "finished" && frame.summary_id) state.summaryId = frame.summary_id;
      return scheduleRender();
    case "compacted":
      return;
    case "retry":
      if (frame.session_id !== state.sessionId) return;
      note(
        `The model request failed (${frame.reason}); trying again in ${Math.round(frame.delay_ms / 100) / 10} s (attempt ${frame.attempt}).`,
      );
      return;
    case "session_archived":
      if (frame.session_id === state.sessionId) {
        showArchived(frame.archived);
        note(frame.archived ? "Archived: the session list hides it; Unarchive brings it back." : "Unarchived.");
      }
      requestSessions();
      return;
    case "session_deleted":
      if (frame.session_id === state.sessionId) selectSession(null);
      requestSessions();
      return;
    case "error":
      if (frame.code === "session_not_found" && frame.action === "subscribe") {
        note(`Session ${state.sessionId} does not exist yet; sending a message starts it under this id.`);
        return;
      }
      if (frame.ref !== undefined && frame.ref === state.pendingNewSession) state.pendingNewSession = null;
      if (frame.action === "answer" || frame.action === "decline") {
        $("question-error").textContent = frame.message;
        $("question-error").hidden = false;
        return;
      }
      if (frame.action === "resume") {
        showError(`${frame.message} (${frame.code})`);
        if (state.sessionId) send({ type: "get_session", session_id: state.sessionId });
        return;
      }
      if (frame.action === "run") {
        $("run-error").textContent = `${frame.message} (${frame.code})`;
        $("run-error").hidden = false;
        return;
      }
      showError(`${frame.message} (${frame.code})`);
      return;
    default:
      return;
  }
}

// ---- sessions ---------------------------------------------------------------

/**
 * @param {string | null} sessionId
 * @param {{ fresh?: boolean }} [options]
 */
function selectSession(sessionId, { fresh = false } = {}) {
  if (state.sessionId && state.sessionId !== sessionId) send({ type: "unsubscribe", session_id: state.sessionId });
  state.sessionId = sessionId;
  state.nodes = new Map();
  state.streams = new Map();
  state.calls = new Map();
  state.status = "";
  state.resumable = null;
  showEarlierButton(null);
  showUsage($("usage"), null);
  showBudgets($("budgets"), $("budget-list"), null);
  branches.reset();
  const params = new URLSearchParams(location.search);
  if (sessionId) params.set("session", sessionId);
  else params.delete("session");
  replaceQuery(params);
  $("session-id").textContent = sessionId ?? "(new: sending a message starts one)";
  $("delete-session").hidden = !sessionId;
  $("archive-session").hidden = true;
  state.summaryId = null;
  setStatus("");
  hideError();
  // The address bar already names the session (?session=...): a reload continues it, nothing to say.
  note("");
  highlightCurrentSession();
  scheduleRender();
  if (sessionId && !fresh) openSession(sessionId);
}

/** @param {string} sessionId */
function openSession(sessionId) {
  send({ type: "subscribe", session_id: sessionId });
  send({ type: "get_session", session_id: sessionId });
}

/** @param {SessionRecord[]} sessions */
function renderSessionList(sessions) {
  state.sessions = sessions;
  const query = $("session-search").value.trim().toLowerCase();
  const shown = query
    ? sessions.filter((session) => `${session.title ?? ""}\n${session.preview ?? ""}`.toLowerCase().includes(query))
    : sessions;
  $("session-none").hidden = shown.length > 0 || sessions.length === 0;
  const list = $("session-list");
  list.replaceChildren(
    ...shown.map((session) => {
      const item = document.createElement("li");
      item.dataset.sessionId = session.id;
      const title = span("title", session.title || session.preview || session.id);
      const preview = span("preview", session.title && session.preview ? session.preview : session.id);
      const meta = span(
        "meta",
        `${session.status} · ${formatTime(session.updated_at)}${session.archived ? " · archived" : ""}`,
      );
      item.append(title, preview, meta);
      item.addEventListener("click", () => {
        selectSession(session.id);
        showSessions(false);
      });
      return item;
    }),
  );
  highlightCurrentSession();
}

function highlightCurrentSession() {
  for (const item of /** @type {HTMLCollectionOf<HTMLElement>} */ ($("session-list").children)) {
    item.setAttribute("aria-current", String(item.dataset.sessionId === state.sessionId));
  }
}

/** @param {string} status */
function setStatus(status) {
  state.status = status;
  const element = $("session-status");
  element.textContent = status;
  element.className = `status status-${status}`;
}

/**
 * The Archive button says what it will do: archive the session, or bring an archived one back.
 * @param {boolean} archived
 */
function showArchived(archived) {
  state.archived = archived;
  const button = $("archive-session");
  button.hidden = !state.sessionId;
  button.textContent = archived ? "Unarchive" : "Archive";
  button.title = archived
    ? "Bring this session back into the session list"
    : "Hide this session from the session list (kept on disk; pruned after 90 days)";
}

/** @param {boolean} busy */
function setBusy(busy) {
  state.busy = busy;
  $("stop-turn").hidden = !busy;
  renderResumable();
  $("chat-send").disabled = busy;
  $("run-submit").disabled = busy;
}

/**
 * The Continue button: offered for a turn that stopped short where resuming can get further (a crash, a stop, the
 * model or the network); one waiting for an answer shows its question instead. For an error the program raised
 * itself a Continue would replay the same failure from the record: the page says to fix the program instead.
 */
function renderResumable() {
  const turn = state.resumable;
  const stopped = turn !== null && !state.busy && turn.question_id === null;
  const offered = stopped && turn.resume_helps !== false;
  $("resume-turn").hidden = !offered;
  $("resume-turn").title = offered ? `Continue ${turn.name} (${turn.status}) where it stopped${replayNote(turn)}` : "";
  $("resume-advice").hidden = !(stopped && turn.resume_helps === false);
}

/**
 * What a Continue takes from the record instead of running (and paying for) again.
 * @param {ResumableTurnInfo} turn
 */
function replayNote(turn) {
  const finished = turn.finished_calls ?? 0;
  if (finished === 0) return "";
  return `; ${finished === 1 ? "the step that finished comes" : `the ${finished} steps that finished come`} from the record`;
}

// ---- conversation and call tree -----------------------------------------------

function scheduleRender() {
  if (state.renderQueued) return;
  state.renderQueued = true;
  requestAnimationFrame(() => {
    state.renderQueued = false;
    renderMessages();
    renderTree();
    renderSessionFailure();
  });
}

function orderedNodes() {
  return [...state.nodes.values()].sort((a, b) => a.seq - b.seq);
}

/** The user acted (sent, ran, opened the run panel): show the latest of the conversation, and follow it. */
function followConversation() {
  requestAnimationFrame(() => ($("messages").scrollTop = $("messages").scrollHeight));
}

/**
 * Re-renders a scrolling pane's content; follows new content when the user is at the bottom, else keeps their place.
 * @param {HTMLElement} pane
 * @param {() => void} render
 */
function keepingScroll(pane, render) {
  const following = pane.scrollHeight - pane.scrollTop - pane.clientHeight < 24;
  const top = pane.scrollTop;
  render();
  pane.scrollTop = following ? pane.scrollHeight : top;
}

/**
 * What an llm node shows: its output, the text streamed so far, or the partial text of one cut short.
 * @param {SessionNode} node
 */
function replyText(node) {
  const status = node.metadata.status;
  if (status === "completed" || status === undefined) return stringOf(node.output);
  const streamed = state.streams.get(node.id);
  if (status === "running") return streamed ?? "";
  const partial = typeof node.metadata.partial_output === "string" ? node.metadata.partial_output : "";
  const said = status === "cancelled" ? "stopped" : status;
  const error = /** @type {{ message?: unknown } | undefined} */ (node.metadata.error);
  const why = `(${said}${error ? `: ${error.message}` : ""})`;
  return partial ? `${partial}\n${why}` : why;
}

/** Under the session bar: why the session's last turn failed, when it did (its last top-level node failed). */
function renderSessionFailure() {
  /** @type {SessionNode | null} */
  let last = null;
  for (const node of state.nodes.values())
    if (node.caller === "" && (last === null || node.seq >= last.seq)) last = node;
  const failure =
    last && (last.metadata.status === "failed" || last.metadata.status === "error") ? failureOf(last) : null;
  const element = $("session-failure");
  element.hidden = failure === null;
  if (failure && last) element.textContent = `failed in ${last.name}: ${failureText(failure)}`;
}

/**
 * The text streaming now from model calls made under a top-level call (a program's run), in order.
 * @param {string} callId
 */
function streamsUnder(callId) {
  /** @type {string[]} */
  const texts = [];
  for (const [nodeId, text] of state.streams) {
    let current = state.nodes.get(nodeId);
    const seen = new Set();
    while (current && current.caller !== "" && !seen.has(current.id)) {
      seen.add(current.id);
      current = state.nodes.get(current.caller);
    }
    if (current?.id === callId && text) texts.push(text);
  }
  return texts;
}

function renderMessages() {
  keepingScroll($("messages"), () => keepingOpen($("messages"), renderMessageList));
}

function renderMessageList() {
  const items = [];
  // The head's branch only (branches.js); other branches are a switch away.
  const onBranch = branches.visibleIds(state.nodes);
  for (const node of orderedNodes()) {
    if (node.caller !== "" || (onBranch && !onBranch.has(node.id))) continue;
    const item = document.createElement("li");
    item.dataset.nodeId = node.id;
    if (node.role === "user" && node.name !== "ask_user") {
      item.className = "user";
      if (branches.isEditing(node.id)) item.append(span("who", "you"), branches.editControls(node, state.busy));
      else item.append(span("who", "you"), text(stringOf(node.output)), branches.editControls(node, state.busy));
    } else if (node.role === "llm") {
      const status = node.metadata.status;
      item.className = `llm${status === "running" ? " streaming" : ""}${status === "cancelled" ? " stopped" : ""}`;
      // A finished reply is formatted (Markdown, JSON); one streaming or cut short stays plain text.
      const finished = status === "completed" || status === undefined;
      // A reply parsed against a schema shows its parsed value (a tree), not the JSON text it came as.
      item.append(span("who", node.name), finished ? formatValue(replyValue(node), node.id) : text(replyText(node)));
    } else if (node.role === "code") {
      const status = node.metadata.status;
      item.className = `code${status === "cancelled" ? " stopped" : ""}`;
      // The call on one line, its result once below it, formatted.
      item.append(span("who", `program ${node.name}`), span("call", `${node.name}(${stringOf(node.input)})`));
      if (status === "completed") item.append(resultBlock(node.output, node.id));
      else if (status)
        item.append(span(`outcome status-${status}`, status === "cancelled" ? "stopped" : String(status)));
      // A program's model calls as they stream, in the conversation as well as in the call tree.
      if (status === "running") {
        for (const streamed of streamsUnder(node.id)) {
          const pre = document.createElement("pre");
          pre.className = "stream";
          pre.textContent = streamed;
          item.append(pre);
        }
      }
      const failure = status === "failed" || status === "error" ? failureOf(node) : null;
      if (failure) item.append(failureBlock(failure));
    } else {
      continue;
    }
    items.push(item);
  }
  $("messages").replaceChildren(...foldSummary(items, state.nodes, state.summaryId));
}

function renderTree() {
  const reopen = (/** @type {HTMLDetailsElement} */ details) => {
    const call = details.classList.contains("model-call") ? state.calls.get(details.dataset.callFor ?? "") : undefined;
    if (call) fillModelCall(details, call);
  };
  const pane = /** @type {HTMLElement} */ ($("call-tree").closest(".calls"));
  keepingScroll(pane, () => keepingOpen($("call-tree"), renderCallTree, reopen));
}

function renderCallTree() {
  const nodes = orderedNodes();
  const children = new Map();
  const roots = [];
  // The head's branch only, as the conversation shows it (other branches are a switch away), and its active summary.
  const onBranch = branches.visibleIds(state.nodes);
  const shown = (/** @type {SessionNode} */ node) =>
    !onBranch || onBranch.has(node.id) || summaryAppliesTo(node, onBranch);
  for (const node of nodes) {
    const parent = node.caller !== "" && state.nodes.has(node.caller) ? node.caller : null;
    if (parent === null) {
      if (shown(node)) roots.push(node);
    } else {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(node);
    }
  }
  /**
   * @param {SessionNode} node
   * @returns {HTMLLIElement}
   */
  const build = (node) => {
    const item = document.createElement("li");
    item.dataset.nodeId = node.id;
    const line = document.createElement("div");
    line.className = "call";
    const status = typeof node.metadata.status === "string" ? node.metadata.status : "";
    line.append(span("role", isToolNode(node) ? "tool" : node.role), nameElement(node));
    if (status) line.append(span(`status status-${status}`, status));
    const seconds = typeof node.metadata.duration_seconds === "number" ? node.metadata.duration_seconds : null;
    if (seconds !== null) line.append(span("duration", formatDuration(seconds)));
    item.append(line);
    const failure = status === "failed" || status === "error" ? failureOf(node) : null;
    if (isToolNode(node)) item.append(toolBlock(node));
    else if (failure) item.append(failureBlock(failure));
    if (node.role === "llm" && state.streams.has(node.id)) {
      // A program's model call as it streams.
      const pre = document.createElement("pre");
      pre.className = "stream";
      pre.textContent = state.streams.get(node.id) ?? "";
      item.append(pre);
    } else if (node.role === "llm") {
      if (hasParsedOutput(node)) item.append(parsedBlock(node));
      item.append(
        modelCallBlock(node.id, () => {
          if (state.sessionId) send({ type: "get_calls", session_id: state.sessionId });
        }),
      );
    }
    if (node.role === "code" && typeof node.metadata.doc === "string" && node.metadata.doc !== "") {
      const details = document.createElement("details");
      details.dataset.openKey = `doc:${node.id}`;
      const summary = document.createElement("summary");
      summary.textContent = "doc";
      const pre = document.createElement("pre");
      pre.textContent = node.metadata.doc;
      details.append(summary, pre);
      item.append(details);
    }
    const kids = children.get(node.id);
    if (kids) {
      const list = document.createElement("ul");
      list.append(...kids.map(build));
      item.append(list);
    }
    return item;
  };
  $("call-tree").replaceChildren(...roots.map(build));
}

/**
 * The active summary, when every turn it covers is on the branch shown.
 * @param {SessionNode} node
 * @param {Set<string>} onBranch
 */
function summaryAppliesTo(node, onBranch) {
  const covers = node.metadata.covers_ids;
  return node.id === state.summaryId && Array.isArray(covers) && covers.every((id) => onBranch.has(id));
}

// ---- programs -------------------------------------------------------------------

function renderPrograms() {
  const select = $("program-select");
  select.replaceChildren(
    ...state.programs.map((program) => {
      const option = document.createElement("option");
      option.value = program.name;
      option.textContent = program.name;
      return option;
    }),
  );
  $("run-panel").hidden = state.programs.length === 0;
  showProgramDoc();
}

function showProgramDoc() {
  const program = state.programs.find((candidate) => candidate.name === $("program-select").value);
  $("program-doc").textContent = program ? program.doc || program.description : "";
  // A form from the input's schema when it fits one; the JSON box otherwise (and always one click away).
  const schema = program?.input_schema;
  const fits = formFits(schema);
  if (fits) renderFields($("program-fields"), schema);
  $("program-fields").hidden = !fits;
  $("program-json").open = !fits;
}

// ---- helpers --------------------------------------------------------------------

/**
 * As the CLI prints it: the code, or the class name of a program's own error (code "error").
 * @param {FrameError} error
 */
function errorLabel(error) {
  return error.code === "error" && error.name ? error.name : error.code;
}

/** @param {string} message */
function showError(message) {
  $("turn-error").textContent = message;
  $("turn-error").className = "error";
  $("turn-error").hidden = false;
}

/** @param {string} message */
function showStopped(message) {
  $("turn-error").textContent = message;
  $("turn-error").className = "stopped";
  $("turn-error").hidden = false;
}

function hideError() {
  $("turn-error").hidden = true;
}

/** @param {string} message */
function note(message) {
  $("session-note").textContent = message;
  $("session-note").hidden = message === "";
}

// ---- wiring ---------------------------------------------------------------------

/**
 * Starts a turn in the session shown (a new one when none is): the frame gets the session and a `client_msg_id`.
 * @param {TurnStart} frame
 */
function startTurn(frame) {
  hideError();
  followConversation();
  const ref = newRef();
  if (!state.sessionId) state.pendingNewSession = ref;
  const sent = send({ ...frame, ...(state.sessionId ? { session_id: state.sessionId } : {}), client_msg_id: ref });
  if (sent) setBusy(true);
  return ref;
}

const questions = createQuestionDialog({ send, newRef });

const branches = createBranchView({
  send,
  startTurn,
  rerender: scheduleRender,
  currentSession: () => state.sessionId,
  nodes: () => state.nodes,
});

$("chat-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("chat-input");
  const message = input.value.trim();
  if (message === "" || state.busy) return;
  input.value = "";
  // The servers ticked give their tools to this turn.
  const servers = chosenMcpServers($("mcp-server-list"));
  startTurn({ type: "chat", text: message, ...(servers.length > 0 ? { mcp_servers: servers } : {}) });
});

$("chat-input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("chat-form").requestSubmit();
});

$("run-form").addEventListener("submit", (event) => {
  event.preventDefault();
  $("run-error").hidden = true;
  let input;
  try {
    input = $("program-json").open ? JSON.parse($("program-input").value || "{}") : readFields($("program-fields"));
  } catch (error) {
    $("run-error").textContent = `The input is not valid JSON: ${/** @type {Error} */ (error).message}`;
    $("run-error").hidden = false;
    return;
  }
  startTurn({
    type: "run",
    program: $("program-select").value,
    input,
    ...($("approve-tools").checked ? { approve_tools: true } : {}),
  });
});

$("program-select").addEventListener("change", showProgramDoc);
$("run-panel").addEventListener("toggle", followConversation);
/**
 * "Load earlier" while the session has nodes older than the pages loaded.
 * @param {SessionDetailPage | null} page
 */
function showEarlierButton(page) {
  state.page = page;
  const button = $("load-earlier");
  const more = page !== null && page.has_more && page.first_seq !== null;
  button.hidden = !more;
  if (more) button.textContent = `Load earlier (${page.total_nodes - state.nodes.size} more nodes)`;
}

$("load-earlier").addEventListener("click", () => {
  if (state.sessionId && state.page && state.page.first_seq !== null)
    send({ type: "get_session", session_id: state.sessionId, before_seq: state.page.first_seq });
});

$("new-session").addEventListener("click", () => {
  selectSession(null);
  showSessions(false);
});
addCompactButton($("delete-session"), () => {
  if (state.sessionId) send({ type: "compact", session_id: state.sessionId });
});
$("archive-session").addEventListener("click", () => {
  if (state.sessionId) send({ type: "archive_session", session_id: state.sessionId, archived: !state.archived });
});
$("stop-turn").addEventListener("click", () => {
  if (state.sessionId) send({ type: "stop", session_id: state.sessionId });
});
$("delete-session").addEventListener("click", () => {
  if (state.sessionId && confirm(`Delete session ${state.sessionId}? Its history is removed from disk.`)) {
    send({ type: "delete_session", session_id: state.sessionId });
  }
});
$("resume-turn").addEventListener("click", () => {
  if (!state.sessionId || !state.resumable) return;
  hideError();
  if (send({ type: "resume", session_id: state.sessionId, client_msg_id: newRef() })) {
    state.resumable = null;
    setBusy(true);
  }
});
$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem("openprogram.token", $("token-input").value);
  state.connection?.reconnect();
});
$("session-search").addEventListener("input", () => renderSessionList(state.sessions));
$("show-archived").addEventListener("change", () => {
  state.showArchived = $("show-archived").checked;
  requestSessions();
});
$("show-sessions").addEventListener("click", () =>
  showSessions($("show-sessions").getAttribute("aria-expanded") !== "true"),
);

/**
 * On a narrow screen the session list is behind a button; the conversation comes first.
 * @param {boolean} shown
 */
function showSessions(shown) {
  $("show-sessions").setAttribute("aria-expanded", String(shown));
  document.body.classList.toggle("sessions-shown", shown);
}

const initial = new URLSearchParams(location.search).get("session");
if (initial) {
  state.sessionId = initial;
  $("session-id").textContent = initial;
  $("delete-session").hidden = false;
}
window.addEventListener("pageshow", () => highlightCurrentSession());
connect();

// @ts-check
// Branches on the web page: the branch switcher in the session bar, the
// conversation shown as the head's branch only, and edit and resend of a past
// message. It speaks the dispatcher's branch frames (list_branches, checkout,
// and chat with `from`; see the package README) and builds every element with
// textContent, like app.js. Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").ServerFrame} ServerFrame */
/** @typedef {import("../src/protocol.js").ClientFrame} ClientFrame */
/** @typedef {import("../src/protocol.js").BranchInfo} BranchInfo */
/** @typedef {import("../src/protocol.js").ChatFrame} ChatFrame */
/** @typedef {import("../src/protocol.js").RunFrame} RunFrame */
/** @typedef {import("@openprogram/session-context").SessionNode} SessionNode */
/**
 * A frame that starts a turn, as a form builds it: the page adds the session and its `client_msg_id`.
 * @typedef {Omit<ChatFrame, "session_id" | "client_msg_id"> | Omit<RunFrame, "session_id" | "client_msg_id">} TurnStart
 */
/**
 * What the branch view is given by the page.
 * @typedef {object} BranchViewOptions
 * @property {(frame: ClientFrame) => boolean} send
 * @property {(frame: TurnStart) => string} startTurn
 * @property {() => void} rerender
 * @property {() => string | null} currentSession
 * @property {() => Map<string, SessionNode>} nodes
 */

/**
 * The page's branch view. `send` sends a frame, `startTurn` starts a turn as
 * the chat form does, `rerender` schedules a redraw of the conversation,
 * `nodes()` is the session's nodes by id (to label unnamed branches).
 * @param {BranchViewOptions} options
 */
export function createBranchView({ send, startTurn, rerender, currentSession, nodes }) {
  const view = {
    /**
     * The session's head as this page knows it; undefined until the session's detail arrives.
     * @type {string | null | undefined}
     */
    headId: undefined,
    /** @type {BranchInfo[]} */
    tips: [],
    /**
     * The node whose message is being edited, or null.
     * @type {string | null}
     */
    editing: null,
    /**
     * What is typed in the edit form so far, and where the caret is: a redraw (any incoming frame) keeps them.
     * @type {{ text: string, start: number, end: number } | null}
     */
    draft: null,
  };

  const select = document.createElement("select");
  select.id = "branch-select";
  select.setAttribute("aria-label", "Branch");
  select.hidden = true;
  select.addEventListener("change", () => {
    const sessionId = currentSession();
    if (sessionId && select.value) send({ type: "checkout", session_id: sessionId, node_id: select.value });
  });
  const label = document.createElement("label");
  label.className = "branch-switcher";
  label.append("Branch ", select);
  label.hidden = true;
  document.querySelector(".session-bar")?.append(label);

  function renderSwitcher() {
    const options = view.tips.map((tip, index) => {
      const option = document.createElement("option");
      option.value = tip.head_id;
      option.textContent = `${tip.active ? "● " : ""}${tip.name ?? unnamedLabel(tip, index)}`;
      option.selected = tip.active;
      return option;
    });
    // A head on an earlier turn (checked out mid-branch) is on no tip: say so rather than pick one.
    if (!view.tips.some((tip) => tip.active) && view.headId) {
      const detached = document.createElement("option");
      detached.value = "";
      detached.textContent = `at an earlier turn (${view.headId.slice(0, 8)})`;
      detached.selected = true;
      options.unshift(detached);
    }
    select.replaceChildren(...options);
    // One branch needs no switcher.
    label.hidden = select.hidden = view.tips.length < 2;
  }

  /**
   * An unnamed branch says what its last message asked: `“Somewhere colder” (ba1sha)`.
   * @param {BranchInfo} tip
   * @param {number} index
   */
  function unnamedLabel(tip, index) {
    const all = nodes();
    let node = all.get(tip.head_id);
    const seen = new Set();
    while (node && node.role !== "user" && !seen.has(node.id)) {
      seen.add(node.id);
      node = node.predecessor === null ? undefined : all.get(node.predecessor);
    }
    const asked = node && typeof node.output === "string" ? node.output.replace(/\s+/g, " ").trim() : "";
    const short = tip.head_id.slice(0, 8);
    if (asked === "") return `branch ${index + 1} (${short})`;
    return `“${asked.length > 40 ? `${asked.slice(0, 39)}…` : asked}” (${short})`;
  }

  /**
   * Follows a frame; returns true for the frames this view owns.
   * @param {ServerFrame} frame
   */
  function observe(frame) {
    const sessionId = currentSession();
    switch (frame.type) {
      case "session_detail":
        if (sessionId === null || frame.session_id !== sessionId) return false;
        view.headId = frame.meta.head_id ?? null;
        send({ type: "list_branches", session_id: sessionId });
        return false;
      case "node":
        if (frame.session_id !== sessionId || frame.op !== "append" || frame.node.caller !== "") return false;
        // The head follows the conversation as it grows, and jumps to an edited message's new branch.
        if (frame.node.metadata.edit_of !== undefined || frame.node.predecessor === (view.headId ?? null))
          view.headId = frame.node.id;
        return false;
      case "turn_done":
      case "turn_failed":
        if (sessionId !== null && frame.session_id === sessionId)
          send({ type: "list_branches", session_id: sessionId });
        return false;
      case "branches":
        if (frame.session_id !== sessionId) return true;
        view.tips = frame.branches;
        view.headId = frame.head_id;
        renderSwitcher();
        rerender();
        return true;
      case "head_moved":
        if (frame.session_id === sessionId) {
          view.headId = frame.head_id;
          rerender();
        }
        return true;
      default:
        return false;
    }
  }

  /** Forgets the previous session's branches (a session was selected). */
  function reset() {
    view.headId = undefined;
    view.tips = [];
    view.editing = null;
    view.draft = null;
    renderSwitcher();
  }

  /**
   * The ids of the top-level nodes on the head's branch, walking predecessors
   * back from the head, and the unfinished reply hanging on it (null while
   * the head is unknown: everything shows).
   * @param {Map<string, SessionNode>} nodes
   * @returns {Set<string> | null}
   */
  function visibleIds(nodes) {
    if (view.headId === undefined) return null;
    /** @type {Set<string>} */
    const ids = new Set();
    let current = view.headId;
    while (current && current !== "ROOT" && !ids.has(current)) {
      const node = nodes.get(current);
      if (!node) break;
      ids.add(current);
      current = node.predecessor;
    }
    // A reply that has not completed (streaming, stopped, failed) hangs on the head without becoming it: shown too.
    for (const node of nodes.values()) {
      const status = node.metadata.status;
      if (
        node.caller === "" &&
        node.predecessor === view.headId &&
        node.role !== "user" &&
        status &&
        status !== "completed"
      )
        ids.add(node.id);
    }
    return ids;
  }

  /**
   * The Edit button of a past user message, or its edit form while it is being edited.
   * @param {SessionNode} node
   * @param {boolean} busy
   * @returns {HTMLElement}
   */
  function editControls(node, busy) {
    if (view.editing === node.id) return editForm(node);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "edit-message";
    button.textContent = "Edit";
    button.title = "Edit and resend: a new branch from here; this one is kept";
    button.disabled = busy;
    button.addEventListener("click", () => {
      view.editing = node.id;
      view.draft = null;
      rerender();
    });
    return button;
  }

  /** @param {SessionNode} node */
  function editForm(node) {
    const form = document.createElement("form");
    form.className = "edit-form";
    const area = document.createElement("textarea");
    area.rows = 3;
    const draft = view.draft;
    area.value = draft ? draft.text : typeof node.output === "string" ? node.output : "";
    area.setAttribute("aria-label", "Edited message");
    // The page redraws the conversation on every frame: what is typed lives in the view, not in this element.
    const remember = () => {
      view.draft = { text: area.value, start: area.selectionStart, end: area.selectionEnd };
    };
    area.addEventListener("input", remember);
    area.addEventListener("select", remember);
    area.addEventListener("keyup", remember);
    area.addEventListener("click", remember);
    const resend = document.createElement("button");
    resend.type = "submit";
    resend.className = "primary";
    resend.textContent = "Send as a new branch";
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "Cancel";
    cancel.addEventListener("click", () => {
      view.editing = null;
      view.draft = null;
      rerender();
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = area.value.trim();
      if (text === "") return;
      view.editing = null;
      view.draft = null;
      startTurn({ type: "chat", text, from: node.id });
      rerender();
    });
    form.append(area, resend, cancel);
    queueMicrotask(() => {
      area.focus();
      if (draft) area.setSelectionRange(draft.start, draft.end);
    });
    return form;
  }

  return {
    observe,
    reset,
    visibleIds,
    editControls,
    /** @param {string} nodeId */
    isEditing: (nodeId) => view.editing === nodeId,
  };
}

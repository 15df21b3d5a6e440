// @ts-check
// Compaction on the page. The session's active summary (meta.json `_last_summary_id`) shows as one
// folded block at the place of the turns it stands for, as the model reads them; opening it shows
// those turns. A Compact button sends the `compact` frame; `compaction` frames become a note.
// Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").SessionDetailFrame["meta"]} SessionMeta */
/** @typedef {import("../src/protocol.js").CompactionFrame} CompactionFrame */
/** @typedef {import("@openprogram/session-context").SessionNode} SessionNode */

const PREFIX = "[Previous conversation summary]\n";

/**
 * The active summary's id from a session's meta, or null.
 * @param {SessionMeta | null | undefined} meta
 */
export function summaryIdOf(meta) {
  const id = /** @type {Record<string, unknown> | null | undefined} */ (meta)?._last_summary_id;
  return typeof id === "string" && id !== "" ? id : null;
}

/**
 * The message items with the active summary folded in: the items of the nodes it covers move into one
 * block at the first one's place, and the summary's own item goes. When a covered node is not among
 * `nodes`, nothing folds.
 * @param {HTMLElement[]} items
 * @param {Map<string, SessionNode>} nodes
 * @param {string | null} summaryId
 * @returns {HTMLElement[]}
 */
export function foldSummary(items, nodes, summaryId) {
  // Summaries an active one replaced are relics: never part of the conversation shown.
  const shown = items.filter(
    (item) => item.dataset.nodeId === summaryId || !isSummary(nodes.get(item.dataset.nodeId ?? "")),
  );
  const summary = summaryId ? nodes.get(summaryId) : undefined;
  /** @type {string[]} */
  const covered = Array.isArray(summary?.metadata?.covers_ids) ? summary.metadata.covers_ids : [];
  if (!summary || covered.length === 0 || !covered.every((id) => nodes.has(id))) return shown;
  const coveredIds = new Set(covered);
  /** @type {HTMLElement[]} */
  const folded = [];
  /** @type {HTMLElement[]} */
  const result = [];
  /** @type {HTMLLIElement | null} */
  let block = null;
  for (const item of shown) {
    const id = item.dataset.nodeId;
    if (id === summary.id) continue;
    if (!coveredIds.has(id ?? "")) {
      result.push(item);
      continue;
    }
    if (!block) {
      block = document.createElement("li");
      result.push(block);
    }
    folded.push(item);
  }
  if (!block) return shown;
  block.className = "summary";
  block.dataset.nodeId = summary.id;
  const details = document.createElement("details");
  details.dataset.openKey = `summary:${summary.id}`;
  const title = document.createElement("summary");
  title.textContent = `Summary of ${covered.length} earlier message${covered.length === 1 ? "" : "s"}`;
  const text = document.createElement("p");
  text.className = "summary-text";
  const output = typeof summary.output === "string" ? summary.output : "";
  text.textContent = output.startsWith(PREFIX) ? output.slice(PREFIX.length) : output;
  const list = document.createElement("ol");
  list.className = "messages covered";
  list.append(...folded);
  details.append(title, text, list);
  block.append(details);
  return result;
}

/** @param {SessionNode | undefined} node */
function isSummary(node) {
  return node !== undefined && (Array.isArray(node.metadata?.covers_ids) || node.name === "context/summary");
}

/**
 * Adds a Compact button after `anchor`, shown whenever `anchor` is (the session's Delete); `onClick` sends the frame.
 * @param {HTMLElement} anchor
 * @param {() => void} onClick
 */
export function addCompactButton(anchor, onClick) {
  const button = document.createElement("button");
  button.type = "button";
  button.id = "compact-session";
  button.textContent = "Compact";
  button.title = "Summarise the history except the most recent turns";
  button.addEventListener("click", onClick);
  const follow = () => (button.hidden = anchor.hidden);
  new MutationObserver(follow).observe(anchor, { attributes: true, attributeFilter: ["hidden"] });
  follow();
  anchor.after(button);
  return button;
}

/**
 * What a `compaction` frame says, in a line: its `text`, worded by the core as the CLI words it.
 * @param {CompactionFrame} frame
 */
export function compactionNote(frame) {
  return frame.text;
}

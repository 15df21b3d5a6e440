// @ts-check
// The session's token usage on the page: its total, then one line per turn, then why a cost is missing.
// `usage` is the session_detail frame's `usage` (the core's describeSessionUsage), or null for none yet.
// Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").SessionDetailFrame["usage"]} SessionUsage */
/** @typedef {SessionUsage["total"]} PricedUsage */

/**
 * Replaces the content of `element` with the usage (text only, built with textContent).
 * @param {HTMLElement} element
 * @param {SessionUsage | null} usage
 */
export function showUsage(element, usage) {
  element.replaceChildren();
  if (!usage || usage.total.calls === 0) {
    element.append(line("usage-total", usage ? "No model calls yet." : ""));
    return;
  }
  element.append(line("usage-total", `Session: ${summary(usage.total)}`));
  const turns = document.createElement("ol");
  turns.className = "usage-turns";
  for (const turn of usage.turns) {
    const item = document.createElement("li");
    item.dataset.turn = turn.turn;
    item.textContent = `${turn.label}: ${summary(turn)}`;
    turns.append(item);
  }
  element.append(turns);
  for (const note of usage.notes) element.append(line("usage-note", note));
}

/** "2 calls, 1,200 in (200 cached), 30 out, $0.0025" (or "no cost: no price for m"). */
/** @param {PricedUsage} usage */
function summary(usage) {
  const calls = `${usage.calls} ${usage.calls === 1 ? "call" : "calls"}`;
  const without = usage.callsWithoutUsage > 0 ? ` (${usage.callsWithoutUsage} without usage)` : "";
  const cost =
    usage.cost === null ? `no cost (no price: ${usage.unpricedModels.join(", ")})` : `$${formatDollars(usage.cost)}`;
  return `${calls}${without}, ${count(usage.inputTokens)} in (${count(usage.cachedInputTokens)} cached), ${count(usage.outputTokens)} out, ${cost}`;
}

/** @param {number} cost */
function formatDollars(cost) {
  if (cost >= 1 || cost === 0) return cost.toFixed(2);
  return cost.toFixed(6).replace(/0+$/, "");
}

/** @param {number} value */
function count(value) {
  return value.toLocaleString("en-US");
}

/** @param {string} className @param {string} content */
function line(className, content) {
  const paragraph = document.createElement("p");
  paragraph.className = className;
  paragraph.textContent = content;
  return paragraph;
}

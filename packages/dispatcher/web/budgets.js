// @ts-check
// The dispatcher's budgets on the page: one bar (a <meter>) per configured limit, what was spent against it beside
// the limit, and which budget stopped the latest turn. `budgets` is the session_detail frame's `budgets` (the core's
// describeBudgets), absent when the dispatcher has none. Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").SessionBudgets} SessionBudgets */
/** @typedef {import("../src/protocol.js").BudgetStandingInfo} BudgetStandingInfo */
/** @typedef {BudgetStandingInfo["dimension"]} Dimension */

const SCOPE = { exec: "Each exec", turn: "Turn", session: "Session", program: "Program day" };
const UNIT = { tokens: "tokens", cost: "cost", seconds: "time" };

/**
 * Replaces the budgets shown in `section` (hidden without budgets); text only, built with textContent.
 * @param {HTMLElement} section
 * @param {HTMLElement} list
 * @param {SessionBudgets | null} budgets
 */
export function showBudgets(section, list, budgets) {
  list.replaceChildren();
  section.hidden = !budgets || budgets.standings.length === 0;
  if (!budgets || section.hidden) return;
  for (const standing of budgets.standings) list.append(bar(standing));
  if (budgets.stopped_by) {
    const stop = document.createElement("li");
    stop.className = "budget-stop";
    stop.setAttribute("role", "status");
    const { scope, dimension, message } = budgets.stopped_by;
    stop.textContent = `The ${scope} ${UNIT[dimension]} budget stopped the latest turn: ${message}`;
    list.append(stop);
  }
}

/** @param {BudgetStandingInfo} standing */
function bar(standing) {
  const item = document.createElement("li");
  item.className = standing.stopped_turn ? "budget stopped" : "budget";
  item.dataset.scope = standing.scope;
  item.dataset.dimension = standing.dimension;
  const id = `budget-${standing.scope}-${standing.dimension}`;
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = `${SCOPE[standing.scope] ?? standing.scope} ${UNIT[standing.dimension] ?? standing.dimension}`;
  const figures = document.createElement("span");
  figures.className = "budget-figures";
  figures.textContent =
    standing.spent === null
      ? `limit ${amount(standing.dimension, standing.limit)} (${standing.over})`
      : `${amount(standing.dimension, standing.spent)} of ${amount(standing.dimension, standing.limit)} ` +
        `(${percent(standing.spent, standing.limit)}, ${standing.over})`;
  item.append(label, figures);
  if (standing.spent !== null) {
    const meter = document.createElement("meter");
    meter.id = id;
    meter.min = 0;
    meter.max = standing.limit || 1;
    meter.value = Math.min(standing.spent, meter.max);
    meter.high = meter.max * 0.8;
    meter.optimum = 0;
    meter.textContent = percent(standing.spent, standing.limit);
    item.append(meter);
  }
  if (standing.stopped_turn) {
    const stopped = document.createElement("strong");
    stopped.className = "budget-stopped";
    stopped.textContent = "stopped the latest turn";
    item.append(stopped);
  }
  return item;
}

/** @param {number} spent @param {number} limit */
function percent(spent, limit) {
  return limit > 0 ? `${Math.round((100 * spent) / limit)}%` : spent > 0 ? "over" : "0%";
}

/** @param {Dimension} dimension @param {number} value */
function amount(dimension, value) {
  if (dimension === "cost")
    return `$${value >= 1 || value === 0 ? value.toFixed(2) : value.toFixed(6).replace(/0+$/, "")}`;
  if (dimension === "seconds") return `${Number(value.toFixed(1))} s`;
  return `${Math.round(value).toLocaleString("en-US")} tokens`;
}

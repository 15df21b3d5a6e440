// @ts-check
// A structured value (an object or an array: a program's result, a model reply parsed against its schema, a tool's
// arguments) as a collapsible tree. Its text is the value's JSON, indented by two spaces, exactly as
// JSON.stringify(value, null, 2) writes it (so copying it gives the JSON), `…` standing for what is folded (built
// only when opened). Each object and array opens with a button on its bracket that folds it to `{…}` / `[…]` and
// opens it again (Enter or Space from the keyboard; `aria-expanded` says which). Text only, built with textContent.

/** Levels shown open at first; deeper objects and arrays start collapsed (the reader opens what they want). */
const OPEN_LEVELS = 3;
/** What the reader toggled, by owner and path, so a redraw (the page redraws on every frame) keeps it. */
const toggled = new Map();

/**
 * A `<pre class="json json-tree">` showing `value`. `owner` (a node id and what of it is shown) keys the state of
 * its toggles across redraws; without one they start over at each redraw.
 */
/**
 * @param {unknown} value
 * @param {string | null} [owner]
 * @returns {HTMLPreElement}
 */
export function jsonTree(value, owner = null) {
  const pre = document.createElement("pre");
  pre.className = "json json-tree";
  appendValue(pre, value, 0, "$", owner);
  return pre;
}

/**
 * Appends `value` at `depth` (its JSON path `path`) to `parent`.
 * @param {HTMLElement} parent
 * @param {unknown} value
 * @param {number} depth
 * @param {string} path
 * @param {string | null} owner
 */
function appendValue(parent, value, depth, path, owner) {
  if (value === null || typeof value !== "object") {
    parent.append(scalar(value));
    return;
  }
  const array = Array.isArray(value);
  /** @type {Array<[string | number, unknown]>} */
  const entries = array ? value.map((item, index) => [index, item]) : Object.entries(value);
  const [open, close] = array ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) {
    parent.append(open + close);
    return;
  }
  const key = owner === null ? null : `${owner}:${path}`;
  const expanded = (key !== null && toggled.has(key) ? toggled.get(key) : null) ?? depth < OPEN_LEVELS;
  const toggle = document.createElement("button");
  toggle.type = "button";
  toggle.className = "json-toggle";
  toggle.textContent = open;
  const count = `${entries.length} ${array ? (entries.length === 1 ? "item" : "items") : entries.length === 1 ? "key" : "keys"}`;
  toggle.title = `${array ? "Array" : "Object"} of ${count}: click to collapse or expand`;
  toggle.setAttribute("aria-label", `${array ? "array" : "object"} of ${count} at ${path}`);
  const children = document.createElement("span");
  children.className = "json-children";
  const folded = document.createElement("span");
  folded.className = "json-folded";
  folded.setAttribute("aria-hidden", "true");
  // Built when first opened: a folded part is not in the page at all (a big result opens fast).
  const fill = () => {
    const indent = "  ".repeat(depth + 1);
    entries.forEach(([name, item], index) => {
      children.append(`\n${indent}`);
      if (!array) {
        const label = document.createElement("span");
        label.className = "json-key";
        label.textContent = JSON.stringify(name);
        children.append(label, ": ");
      }
      appendValue(children, item, depth + 1, array ? `${path}[${name}]` : `${path}.${name}`, owner);
      if (index < entries.length - 1) children.append(",");
    });
    children.append(`\n${"  ".repeat(depth)}`);
  };
  /** @param {boolean} on */
  const show = (on) => {
    if (on && !children.hasChildNodes()) fill();
    toggle.setAttribute("aria-expanded", String(on));
    children.hidden = !on;
    folded.textContent = on ? "" : "…";
  };
  show(expanded);
  toggle.addEventListener("click", () => {
    const on = children.hidden;
    if (key !== null) toggled.set(key, on);
    show(on);
  });
  parent.append(toggle, children, folded, close);
}

/** @param {unknown} value */
function scalar(value) {
  const element = document.createElement("span");
  element.className = `json-${value === null ? "null" : typeof value}`;
  // What JSON cannot hold (a value that did not come from JSON) shows as JSON.stringify would write it in an array.
  element.textContent = JSON.stringify(value) ?? "null";
  return element;
}

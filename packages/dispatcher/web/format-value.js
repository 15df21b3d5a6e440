// @ts-check
// How a result or a reply is shown, once: text as text, Markdown rendered (by
// markdown.js, which never parses HTML), an object or array (a value, or a
// string holding one as JSON) as a collapsible tree (json-tree.js), other JSON
// values pretty-printed.
import { jsonTree } from "./json-tree.js";
import { looksLikeMarkdown, renderMarkdown } from "./markdown.js";

/**
 * A DOM node showing `value` as its kind deserves; `owner` keys a tree's toggles across redraws.
 * @param {unknown} value
 * @param {string | null} [owner]
 * @returns {Node}
 */
export function formatValue(value, owner = null) {
  if (typeof value === "string") {
    const parsed = jsonInside(value);
    if (parsed !== undefined) return jsonTree(parsed, owner);
    if (looksLikeMarkdown(value)) return renderMarkdown(value);
    const text = document.createElement("div");
    text.className = "plain";
    text.textContent = value;
    return text;
  }
  if (value === null || value === undefined) return document.createTextNode("");
  if (typeof value === "object") return jsonTree(value, owner);
  return jsonBlock(value);
}

/** @param {unknown} value */
function jsonBlock(value) {
  const pre = document.createElement("pre");
  pre.className = "json";
  pre.textContent = JSON.stringify(value, null, 2);
  return pre;
}

/**
 * The object or array a string holds as JSON, else undefined.
 * @param {string} text
 * @returns {unknown}
 */
function jsonInside(text) {
  const trimmed = text.trim();
  if (!(trimmed.startsWith("{") && trimmed.endsWith("}")) && !(trimmed.startsWith("[") && trimmed.endsWith("]")))
    return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

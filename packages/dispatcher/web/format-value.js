// How a result or a reply is shown, once: text as text, Markdown rendered (by
// markdown.js, which never parses HTML), JSON (a value, or a string holding
// an object or array) pretty-printed.
import { looksLikeMarkdown, renderMarkdown } from "./markdown.js";

/** A DOM node showing `value` as its kind deserves. */
export function formatValue(value) {
  if (typeof value === "string") {
    const parsed = jsonInside(value);
    if (parsed !== undefined) return jsonBlock(parsed);
    if (looksLikeMarkdown(value)) return renderMarkdown(value);
    const text = document.createElement("div");
    text.className = "plain";
    text.textContent = value;
    return text;
  }
  if (value === null || value === undefined) return document.createTextNode("");
  return jsonBlock(value);
}

function jsonBlock(value) {
  const pre = document.createElement("pre");
  pre.className = "json";
  pre.textContent = JSON.stringify(value, null, 2);
  return pre;
}

/** The object or array a string holds as JSON, else undefined. */
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

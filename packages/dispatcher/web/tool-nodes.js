// @ts-check
// A tool execution in the call tree: a code node with `metadata.tool_call_id`
// under the model reply that asked for it (the core's record, Python
// OpenProgram's shape). It shows the arguments the model sent and the result
// the model read back, an error result marked as one.
import { formatValue } from "./format-value.js";

/** @typedef {import("@openprogram/session-context").SessionNode} SessionNode */

/**
 * True for the code node of a tool call.
 * @param {SessionNode} node
 */
export function isToolNode(node) {
  return node.role === "code" && typeof node.metadata.tool_call_id === "string" && node.metadata.tool_call_id !== "";
}

/**
 * The arguments and the result of a tool node, each under its label.
 * @param {SessionNode} node
 */
export function toolBlock(node) {
  const block = document.createElement("div");
  block.className = "tool-call";
  block.dataset.toolCallId = String(node.metadata.tool_call_id);
  block.append(labelled("arguments", "tool-arguments", node.input ?? {}, `${node.id}:arguments`));
  if (node.output !== null && node.output !== undefined) {
    const failed = node.metadata.is_error === true || isErrorResult(node.output);
    const label = failed ? "error" : "result";
    block.append(
      labelled(label, failed ? "tool-result tool-error" : "tool-result", node.output, `${node.id}:${label}`),
    );
  }
  return block;
}

/** @param {string} label @param {string} className @param {unknown} value @param {string} owner */
function labelled(label, className, value, owner) {
  const part = document.createElement("div");
  part.className = className;
  const name = document.createElement("span");
  name.className = "tool-label";
  name.textContent = label;
  part.append(name, formatValue(value, owner));
  return part;
}

/** @param {unknown} value */
function isErrorResult(value) {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    "error" in value
  );
}

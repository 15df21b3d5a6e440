// @ts-check
// How the page shows one node of a session, in the conversation and in the call tree: its name, its result, a
// structured reply's parsed value, and its error as the CLI prints it. Text only, built with textContent.
// Type-checked against the protocol's types (tsconfig.web.json).
import { formatValue } from "./format-value.js";

/** @typedef {import("@openprogram/session-context").SessionNode} SessionNode */

/**
 * The error a node recorded (ours in metadata.error, or Python's output {error}), or null.
 * @param {SessionNode} node
 * @returns {Failure | null}
 */
export function failureOf(node) {
  const error = /** @type {Record<string, unknown> | null | undefined} */ (node.metadata.error);
  if (error && typeof error === "object") {
    return {
      code: typeof error.code === "string" ? error.code : "error",
      name: typeof error.name === "string" ? error.name : "Error",
      message: typeof error.message === "string" ? error.message : "",
      frames: Array.isArray(error.frames) ? /** @type {StackFrame[]} */ (error.frames) : [],
    };
  }
  const output = /** @type {{ error?: unknown } | null | undefined} */ (node.output);
  if (node.metadata.status === "error" && output && typeof output.error === "string")
    return { code: "error", name: "Error", message: output.error, frames: [] };
  return null;
}

/**
 * A node's error as the page shows it (ours in metadata.error, or Python's output {error}).
 * @typedef {{ code: string, name: string, message: string, frames: StackFrame[] }} Failure
 */

/**
 * A place in the program's files the error came through (the node's `metadata.error.frames`).
 * @typedef {{ file: string, line: number, column: number, function?: string | null }} StackFrame
 */

/**
 * As the CLI prints it: `error [label]: message`, then where it came from in the program's files.
 * @param {Failure} failure
 */
export function failureText(failure) {
  const label = failure.code === "error" && failure.name && failure.name !== "Error" ? failure.name : failure.code;
  const lines = [`error [${label}]: ${failure.message}`];
  for (const frame of failure.frames) {
    const where = `${frame.file}:${frame.line}:${frame.column}`;
    lines.push(`  at ${frame.function ? `${frame.function} (${where})` : where}`);
  }
  return lines.join("\n");
}

/** @param {Failure} failure */
export function failureBlock(failure) {
  const pre = document.createElement("pre");
  pre.className = "failure";
  pre.textContent = failureText(failure);
  return pre;
}

/**
 * @param {unknown} value
 * @param {string} owner
 */
export function resultBlock(value, owner) {
  const block = document.createElement("div");
  block.className = "result";
  block.append(formatValue(value, `${owner}:result`));
  return block;
}

/**
 * True for an llm node whose reply was parsed against the exec's schema (`exec(..., { schema })`).
 * @param {SessionNode} node
 */
export function hasParsedOutput(node) {
  return node.metadata.status === "completed" && "parsed_output" in node.metadata;
}

/**
 * What a finished reply shows: its parsed value when it has one, else its text.
 * @param {SessionNode} node
 */
export function replyValue(node) {
  return hasParsedOutput(node) ? node.metadata.parsed_output : node.output;
}

/**
 * The parsed value of a structured reply in the call tree, as a tree under its label.
 * @param {SessionNode} node
 */
export function parsedBlock(node) {
  const block = document.createElement("div");
  block.className = "parsed-output";
  block.append(span("tool-label", "parsed"), formatValue(node.metadata.parsed_output, `${node.id}:parsed`));
  return block;
}

/**
 * An ask_user node's answer, as the CLI's tree shows it.
 * @param {SessionNode} node
 */
function answerOf(node) {
  return node.output === null || node.output === undefined ? "" : ` → ${stringOf(node.output)}`;
}

/** @param {SessionNode} node */
export function nameElement(node) {
  if (node.role === "user")
    return span("name", node.name === "ask_user" ? `ask_user: ${stringOf(node.input)}${answerOf(node)}` : "message");
  const element = document.createElement("strong");
  element.className = "name";
  element.textContent = node.name;
  return element;
}

/**
 * @param {string} className
 * @param {string} content
 */
export function span(className, content) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = content;
  return element;
}

/** @param {string} content */
export function text(content) {
  return document.createTextNode(content);
}

/** @param {unknown} value */
export function stringOf(value) {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return JSON.stringify(value);
}

/** @param {unknown} seconds */
export function formatTime(seconds) {
  return typeof seconds === "number" ? new Date(seconds * 1000).toLocaleString() : "";
}

/** @param {number} seconds */
export function formatDuration(seconds) {
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`;
}

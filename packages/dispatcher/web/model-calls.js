// @ts-check
// "What the model saw": an llm node of the call tree opens to the request it
// sent (system message, messages, reply, usage), which the dispatcher renders
// again from the recorded nodes (`get_calls`) and checks against the sha256
// of the bytes that were sent. Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").ModelCallInfo} ModelCallInfo */

/**
 * A closed "request" block for an llm node; `onOpen` asks the dispatcher for the session's calls.
 * @param {string} nodeId
 * @param {() => void} onOpen
 */
export function modelCallBlock(nodeId, onOpen) {
  const details = document.createElement("details");
  details.className = "model-call";
  details.dataset.callFor = nodeId;
  details.dataset.openKey = `call:${nodeId}`;
  const summary = document.createElement("summary");
  summary.textContent = "what the model saw";
  details.append(summary);
  details.addEventListener("toggle", () => {
    if (details.open && details.childElementCount === 1) onOpen();
  });
  return details;
}

/**
 * Fills every request block of `root` from a `calls` frame (`byNode`: its calls by node id).
 * @param {ParentNode} root
 * @param {Map<string, ModelCallInfo>} byNode
 */
export function showModelCalls(root, byNode) {
  for (const details of /** @type {NodeListOf<HTMLDetailsElement>} */ (root.querySelectorAll("details.model-call"))) {
    const call = byNode.get(details.dataset.callFor ?? "");
    if (call) fillModelCall(details, call);
  }
}

/**
 * Fills one request block with its call: the messages sent, the reply, and the check of the bytes.
 * @param {HTMLDetailsElement} details
 * @param {ModelCallInfo} call
 */
export function fillModelCall(details, call) {
  const summary = /** @type {HTMLElement} */ (details.querySelector("summary"));
  details.replaceChildren(summary, ...call.messages.map((message) => block(message.role, message.content)));
  details.append(block("reply", call.reply ?? "(none)"), footer(call));
}

/**
 * @param {string} label
 * @param {string} content
 */
function block(label, content) {
  const wrapper = document.createElement("div");
  wrapper.className = `call-message call-${label}`;
  const title = document.createElement("span");
  title.className = "call-role";
  title.textContent = label;
  const pre = document.createElement("pre");
  pre.textContent = content;
  wrapper.append(title, pre);
  return wrapper;
}

/** @param {ModelCallInfo} call */
function footer(call) {
  const element = document.createElement("p");
  element.className = "call-footer";
  /** @type {{ inputTokens?: unknown, outputTokens?: unknown }} */
  const usage = call.usage && typeof call.usage === "object" ? call.usage : {};
  const tokens =
    usage.inputTokens !== undefined || usage.outputTokens !== undefined
      ? `tokens in ${usage.inputTokens ?? "?"} / out ${usage.outputTokens ?? "?"} · `
      : "";
  const check =
    call.verified === true
      ? "the exact request sent"
      : call.verified === false
        ? "does not give the bytes sent (a setting not recorded, or a node changed since)"
        : "not checkable";
  element.textContent = `${call.model} (${call.provider ?? "?"}) · ${tokens}sha256 ${(call.prompt_sha256 ?? "none").slice(0, 12)}: ${check}`;
  return element;
}

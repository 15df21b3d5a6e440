// @ts-check
// The MCP servers the dispatcher offers (`openprogram serve --mcp <name>`): a box per server above the chat box;
// the servers ticked give their tools to the next chat turns (`mcp_servers` of the chat frame). Their tools ask for
// approval in the question dialog unless the server's entry allows them. Text only, built with textContent.
// Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").McpServerInfo} McpServerInfo */
/** @typedef {import("../src/protocol.js").ChatFrame} ChatFrame */

/**
 * Shows the servers of an `mcp_servers` frame in `fieldset` (hidden when there are none), keeping what was ticked.
 * @param {HTMLElement} fieldset
 * @param {HTMLElement} list
 * @param {McpServerInfo[]} servers
 */
export function showMcpServers(fieldset, list, servers) {
  const ticked = new Set(chosenMcpServers(list));
  list.replaceChildren();
  fieldset.hidden = servers.length === 0;
  for (const server of servers) {
    const label = document.createElement("label");
    label.className = "mcp-server";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.name = "mcp-server";
    box.value = server.name;
    box.checked = ticked.has(server.name);
    const name = document.createElement("span");
    name.className = "mcp-server-name";
    name.textContent = server.name;
    const about = document.createElement("span");
    about.className = "mcp-server-about";
    const allowed = server.allow.length > 0 ? `; runs ${server.allow.join(", ")} without asking` : "";
    about.textContent = ` (${server.transport}${allowed})`;
    label.append(box, " ", name, about);
    list.append(label);
  }
}

/**
 * The names of the servers ticked, in the order shown: a chat frame's `mcp_servers`.
 * @param {HTMLElement} list
 * @returns {NonNullable<ChatFrame["mcp_servers"]>}
 */
export function chosenMcpServers(list) {
  return [...list.querySelectorAll("input[name='mcp-server']:checked")].map(
    (box) => /** @type {HTMLInputElement} */ (box).value,
  );
}

// @ts-check
// The conversation and the call tree are rebuilt from the session's nodes on
// every frame. A block the reader opened (a function's doc, what the model saw,
// a summary's covered turns) must stay open across those rebuilds, or a frame
// that arrives while they read closes it under them. Type-checked (tsconfig.web.json).

/**
 * Runs `render`, which rebuilds `root`, then opens again each `<details data-open-key>`
 * whose key was open before; `beforeOpen(details)` may fill it first.
 * @param {ParentNode} root
 * @param {() => void} render
 * @param {(details: HTMLDetailsElement) => void} [beforeOpen]
 */
export function keepingOpen(root, render, beforeOpen = () => {}) {
  const open = new Set();
  for (const details of detailsIn(root, "details[open][data-open-key]")) open.add(details.dataset.openKey);
  render();
  if (open.size === 0) return;
  for (const details of detailsIn(root, "details[data-open-key]")) {
    if (!open.has(details.dataset.openKey)) continue;
    beforeOpen(details);
    details.open = true;
  }
}

/**
 * The `<details>` elements of `root` that `selector` (a `details[...]` selector) finds.
 * @param {ParentNode} root
 * @param {string} selector
 */
function detailsIn(root, selector) {
  return /** @type {NodeListOf<HTMLDetailsElement>} */ (root.querySelectorAll(selector));
}

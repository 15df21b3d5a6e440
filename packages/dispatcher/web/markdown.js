// @ts-check
// A small Markdown renderer that builds DOM nodes and sets only textContent
// and a checked href: no string of the reply is ever parsed as HTML, so a
// reply holding <script>, <img onerror> or a javascript: link shows as text.
// It covers what models write in replies: headings, paragraphs, lists, quotes,
// fenced code, rules, and inline code, bold, italic and links. Type-checked (tsconfig.web.json).

const FENCE = /^\s*(```|~~~)/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
/** Links go only where a click is harmless. */
const SAFE_LINK = /^(https?:|mailto:)/i;

/**
 * True when `text` uses Markdown a reader would want rendered (a heading, list, fence, emphasis, link, code).
 * @param {string} text
 */
export function looksLikeMarkdown(text) {
  return (
    /^(#{1,6}\s|\s*[-*+]\s|\s*\d+[.)]\s|\s*>\s|\s*```)/m.test(text) ||
    /\*\*[^*\n]+\*\*|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)/.test(text)
  );
}

/**
 * The Markdown `text` as a `div.markdown` of DOM nodes.
 * @param {string} text
 * @returns {HTMLDivElement}
 */
export function renderMarkdown(text) {
  const root = document.createElement("div");
  root.className = "markdown";
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  /** The line at `at` (the loops below never read past the end). */
  const lineAt = (/** @type {number} */ at) => /** @type {string} */ (lines[at]);
  let index = 0;
  while (index < lines.length) {
    const line = lineAt(index);
    if (line.trim() === "") {
      index += 1;
    } else if (FENCE.test(line)) {
      const fence = matched(FENCE, line)[1];
      const body = [];
      index += 1;
      while (index < lines.length && !lineAt(index).trim().startsWith(fence)) body.push(lineAt(index++));
      index += 1;
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      code.textContent = body.join("\n");
      pre.append(code);
      root.append(pre);
    } else if (HEADING.test(line)) {
      const [, hashes, content] = matched(HEADING, line);
      // Replies sit inside the page's own headings: h1 in a reply is shown as h3.
      const heading = document.createElement(`h${Math.min(6, hashes.length + 2)}`);
      heading.append(...inline(content));
      root.append(heading);
      index += 1;
    } else if (RULE.test(line)) {
      root.append(document.createElement("hr"));
      index += 1;
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const pattern = BULLET.test(line) ? BULLET : NUMBERED;
      const list = document.createElement(pattern === BULLET ? "ul" : "ol");
      while (index < lines.length && pattern.test(lineAt(index))) {
        const item = document.createElement("li");
        item.append(...inline(matched(pattern, lineAt(index))[1]));
        list.append(item);
        index += 1;
      }
      root.append(list);
    } else if (QUOTE.test(line)) {
      const quoted = [];
      while (index < lines.length && QUOTE.test(lineAt(index))) quoted.push(matched(QUOTE, lineAt(index++))[1]);
      const quote = document.createElement("blockquote");
      quote.append(renderMarkdown(quoted.join("\n")));
      root.append(quote);
    } else {
      const paragraph = [];
      while (index < lines.length && lineAt(index).trim() !== "" && !startsBlock(lineAt(index)))
        paragraph.push(lineAt(index++));
      const element = document.createElement("p");
      element.append(...inline(paragraph.join("\n")));
      root.append(element);
    }
  }
  return root;
}

/**
 * The match of `pattern` in `line`, which it is known to match; the callers read only groups it has, each of
 * which matches something.
 * @param {RegExp} pattern
 * @param {string} line
 * @returns {[string, string, string]}
 */
function matched(pattern, line) {
  return /** @type {[string, string, string]} */ (/** @type {unknown} */ (pattern.exec(line)));
}

/** @param {string} line */
function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || BULLET.test(line) || NUMBERED.test(line) || QUOTE.test(line);
}

/** Inline code, links, bold and italic; everything else stays text. */
const INLINE = /`([^`\n]+)`|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|\b_([^_\n]+)_\b/g;

/**
 * @param {string} text
 * @returns {Node[]}
 */
function inline(text) {
  /** @type {Node[]} */
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = /** @type {number} */ (match.index);
    if (at > last) nodes.push(document.createTextNode(text.slice(last, at)));
    last = at + match[0].length;
    const [, code, label, href, strong, strongUnderscore, emphasis, emphasisUnderscore] = match;
    if (code !== undefined) nodes.push(element("code", [document.createTextNode(code)]));
    else if (label !== undefined) nodes.push(link(label, /** @type {string} */ (href)));
    else if (strong !== undefined || strongUnderscore !== undefined)
      nodes.push(element("strong", inline(/** @type {string} */ (strong ?? strongUnderscore))));
    else nodes.push(element("em", inline(/** @type {string} */ (emphasis ?? emphasisUnderscore))));
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

/**
 * @param {string} label
 * @param {string} href
 * @returns {Node}
 */
function link(label, href) {
  if (!SAFE_LINK.test(href)) return document.createTextNode(`${label} (${href})`);
  const anchor = /** @type {HTMLAnchorElement} */ (element("a", inline(label)));
  anchor.href = href;
  anchor.rel = "noopener noreferrer";
  anchor.target = "_blank";
  return anchor;
}

/**
 * @param {string} tag
 * @param {Node[]} children
 * @returns {HTMLElement}
 */
function element(tag, children) {
  const node = document.createElement(tag);
  node.append(...children);
  return node;
}

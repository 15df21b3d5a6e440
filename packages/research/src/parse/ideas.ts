import { ReplyFormatError } from "../errors.js";
import type { Idea } from "../types.js";
import { numberedItem, plain, unfenced } from "./markdown.js";

/**
 * Reads propose_ideas' reply: a numbered list, best first, one idea per item
 * ("1. Title — summary"). Lines before the list are ignored; an item may run
 * over several lines; the list ends at a blank line followed by unindented
 * text. Ranks follow the numbers.
 */
export function parseIdeas(reply: string): Idea[] {
  const items: Array<{ number: number; lines: string[] }> = [];
  let current: { number: number; lines: string[] } | null = null;
  let afterBlank = false;
  for (const line of unfenced(reply).split(/\r?\n/)) {
    const item = numberedItem(line);
    if (item) {
      current = { number: item.number, lines: [item.text] };
      items.push(current);
      afterBlank = false;
    } else if (line.trim() === "") {
      afterBlank = true;
    } else if (current && (!afterBlank || /^\s/.test(line))) {
      current.lines.push(line.trim());
    } else {
      current = null;
    }
  }
  if (items.length === 0)
    throw new ReplyFormatError("propose_ideas", 'no numbered list of ideas ("1. Title — summary")', reply);
  const numbers = items.map((item) => item.number);
  const repeated = numbers.find((number, index) => numbers.indexOf(number) !== index);
  if (repeated !== undefined) throw new ReplyFormatError("propose_ideas", `the rank ${repeated} appears twice`, reply);
  return [...items]
    .sort((a, b) => a.number - b.number)
    .map((item, index) => {
      const { title, summary } = splitIdea(item.lines);
      if (title === "") throw new ReplyFormatError("propose_ideas", `idea ${item.number} has no title`, reply);
      return { rank: index + 1, title, summary };
    });
}

function splitIdea(lines: string[]): { title: string; summary: string } {
  const [first = "", ...rest] = lines;
  const restText = rest.join(" ");
  const bold = /^(?:\*\*|__)(.+?)(?:\*\*|__)\s*[—–:-]?\s*(.*)$/.exec(first);
  if (bold) return { title: plain(bold[1] as string).replace(/[:.]$/, ""), summary: join(bold[2] as string, restText) };
  // A dash separates best; a colon only when there is no dash (titles may contain one).
  for (const separator of [/^(.+?)\s+[—–]\s+(.+)$/, /^(.+?)\s+-\s+(.+)$/, /^(.+?):\s+(.+)$/]) {
    const separated = separator.exec(first);
    if (separated) return { title: plain(separated[1] as string), summary: join(separated[2] as string, restText) };
  }
  return { title: plain(first).replace(/[:.]$/, ""), summary: plain(restText) };
}

function join(head: string, tail: string): string {
  return plain([head, tail].filter((part) => part.trim() !== "").join(" "));
}

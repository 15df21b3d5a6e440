import { ReplyFormatError } from "../errors.js";
import { sectionTitle } from "../sections.js";
import { heading, nameKey, plain, unfenced } from "./markdown.js";

/**
 * Reads write_section's reply: the section's text. A leading heading (which
 * the doc asks the model to leave out) is dropped; an empty text is an error.
 */
export function parseSectionText(reply: string, section: string): string {
  const lines = unfenced(reply).trim().split(/\r?\n/);
  const first = lines[0] ?? "";
  const marked = heading(first);
  const boldName =
    nameKey(plain(first).replace(/:$/, "")) === nameKey(sectionTitle(section)) && plain(first) !== first.trim();
  if ((marked && marked.level <= 2) || boldName) lines.shift();
  const text = lines.join("\n").trim();
  if (text === "") throw new ReplyFormatError("write_section", `the ${section} section is empty`, reply);
  return text;
}

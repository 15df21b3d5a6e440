import { ReplyFormatError } from "../errors.js";
import { sectionTitle } from "../sections.js";
import type { SectionDraft } from "../types.js";
import { heading, nameKey, plain, unfenced } from "./markdown.js";

const ALIASES: Record<string, string> = {
  methods: "method",
  methodology: "method",
  experiment: "experiments",
  conclusions: "conclusion",
  "related works": "related work",
};

/**
 * Reads revise_paper's reply: the whole paper, each section under a level-1
 * or level-2 heading naming it ("## Related Work"; numbering and case do not
 * matter). Deeper headings stay in the section's text; anything before the
 * first section (a title) is ignored. Every expected section must appear once.
 */
export function parseRevision(reply: string, sections: readonly string[]): SectionDraft[] {
  const bodies = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of unfenced(reply).split(/\r?\n/)) {
    const section = sectionOfHeading(line, sections);
    if (section !== null) {
      if (bodies.has(section))
        throw new ReplyFormatError("revise_paper", `the section "${sectionTitle(section)}" appears twice`, reply);
      current = [];
      bodies.set(section, current);
    } else {
      current?.push(line);
    }
  }
  const missing = sections.filter((section) => !bodies.has(section));
  if (missing.length > 0) {
    throw new ReplyFormatError(
      "revise_paper",
      `no "## ${sectionTitle(missing[0] as string)}" heading (missing: ${missing.map(sectionTitle).join(", ")})`,
      reply,
    );
  }
  return sections.map((section) => {
    const text = (bodies.get(section) as string[]).join("\n").trim();
    if (text === "")
      throw new ReplyFormatError("revise_paper", `the section "${sectionTitle(section)}" is empty`, reply);
    return { section, text };
  });
}

/** The expected section a line heads, if it is a level-1/2 heading or a bold line naming one. */
function sectionOfHeading(line: string, sections: readonly string[]): string | null {
  const marked = heading(line);
  let key: string;
  if (marked) {
    if (marked.level > 2) return null;
    key = nameKey(marked.text);
  } else if (/^\s*(\*\*|__).+(\*\*|__)\s*:?\s*$/.test(line)) {
    key = nameKey(plain(line).replace(/:$/, ""));
  } else {
    return null;
  }
  const named = ALIASES[key] ?? key;
  return sections.find((section) => named === section || named.startsWith(`${section} `)) ?? null;
}

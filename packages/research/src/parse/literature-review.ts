import { ReplyFormatError } from "../errors.js";
import type { LiteratureReview } from "../types.js";
import { bullet, heading, nameKey, plain, unfenced } from "./markdown.js";

const PARTS = [
  { key: "keyWorks", name: "key works", label: "## Key works" },
  { key: "themes", name: "themes", label: "## Themes" },
  { key: "openProblems", name: "open problems", label: "## Open problems" },
] as const;

type PartKey = (typeof PARTS)[number]["key"];

/** Reads survey_literature's reply: three headed sections (Key works, Themes, Open problems), each a bullet list. */
export function parseLiteratureReview(reply: string): LiteratureReview {
  const found = new Map<PartKey, string[]>();
  let current: string[] | null = null;
  for (const line of unfenced(reply).split(/\r?\n/)) {
    const title = headingLike(line);
    if (title !== null) {
      const part = PARTS.find(
        (candidate) =>
          title === candidate.name ||
          title.startsWith(`${candidate.name} `) ||
          title === candidate.name.replace(/s$/, ""),
      );
      current = part ? (found.get(part.key) ?? []) : null;
      if (part) found.set(part.key, current as string[]);
      continue;
    }
    const item = current ? bullet(line) : null;
    if (item !== null) current?.push(item);
  }
  for (const part of PARTS) {
    if ((found.get(part.key)?.length ?? 0) === 0) {
      throw new ReplyFormatError("survey_literature", `no "${part.label}" section with at least one bullet`, reply);
    }
  }
  return {
    text: unfenced(reply).trim(),
    keyWorks: found.get("keyWorks") ?? [],
    themes: found.get("themes") ?? [],
    openProblems: found.get("openProblems") ?? [],
    unverified: true,
  };
}

/** A heading's comparable name: "## Key works", "**Key works:**" or "Key works:" alone on a line. */
function headingLike(line: string): string | null {
  const marked = heading(line);
  if (marked) return nameKey(marked.text);
  const bare = /^\s*(?:\*\*|__)?([A-Za-z][A-Za-z ]{2,30}?)(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*$/.exec(line);
  return bare && (line.includes(":") || line.includes("**") || line.includes("__"))
    ? nameKey(plain(bare[1] as string))
    : null;
}

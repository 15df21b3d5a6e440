import { InvalidInputError } from "@openprogram/session-context";

/** The paper's sections, in the order a run writes them when none are given. */
export const DEFAULT_SECTIONS: readonly string[] = Object.freeze([
  "abstract",
  "introduction",
  "related work",
  "method",
  "experiments",
  "conclusion",
]);

/** "related work" -> "Related Work": how a section is titled in the paper and in revise_paper's reply. */
export function sectionTitle(section: string): string {
  return section.replace(/\b[a-z]/g, (letter) => letter.toUpperCase());
}

/** The canonical name of a section as a caller may spell it ("Related-Work" -> "related work"), or null. */
export function canonicalSection(name: string): string | null {
  const key = name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, " ");
  return DEFAULT_SECTIONS.includes(key) ? key : null;
}

/**
 * The sections a run writes: the defaults when absent, else the given ones in
 * the given order, each canonicalised. Throws InvalidInputError on anything
 * else, naming the valid sections.
 */
export function resolveSections(sections: unknown): string[] {
  if (sections === undefined || sections === null) return [...DEFAULT_SECTIONS];
  const valid = DEFAULT_SECTIONS.join(", ");
  if (!Array.isArray(sections)) throw new InvalidInputError(`sections must be an array of section names (${valid}).`);
  if (sections.length === 0)
    throw new InvalidInputError(`sections is empty: name at least one of ${valid}, or leave it out for all of them.`);
  const resolved: string[] = [];
  for (const name of sections as unknown[]) {
    if (typeof name !== "string")
      throw new InvalidInputError(
        `sections must hold section names (strings), not ${name === null ? "null" : typeof name}.`,
      );
    const section = canonicalSection(name);
    if (section === null)
      throw new InvalidInputError(`Unknown section ${JSON.stringify(name)}. Valid sections: ${valid}.`);
    if (resolved.includes(section))
      throw new InvalidInputError(`The section ${JSON.stringify(section)} is listed twice; list each section once.`);
    resolved.push(section);
  }
  return resolved;
}

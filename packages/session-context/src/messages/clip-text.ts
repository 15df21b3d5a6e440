/** Shortens `text` to at most `max` characters, ending with "…" when it was cut. */
export function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Collapses `text` to one line (runs of whitespace become one space) of at most `max` characters. */
export function clipLine(text: string, max: number): string {
  return clipText(text.replace(/\s+/g, " ").trim(), max);
}

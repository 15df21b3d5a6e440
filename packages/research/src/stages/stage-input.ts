import { InvalidInputError } from "@openprogram/session-context";

/** The string field `field` of a stage's input; InvalidInputError naming the stage when it is missing or empty. */
export function requireText(stage: string, field: string, value: unknown): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new InvalidInputError(`${stage} needs ${field}: a non-empty string.`);
  }
  return value;
}

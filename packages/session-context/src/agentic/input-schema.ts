// Inputs validated by a Standard Schema (zod 4, valibot, arktype...), through
// the spec's own interface, so the core depends on no validation library.
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { InvalidInputError } from "../errors.js";

/** A JSON Schema document (draft 2020-12), as recorded on an agentic function. */
export type JsonSchema = Record<string, unknown>;

/** Throws unless `schema` is a Standard Schema validator. */
export function checkInputSchema(name: string, schema: unknown): StandardSchemaV1 {
  const standard = (schema as { "~standard"?: { version?: unknown; validate?: unknown } } | null)?.["~standard"];
  if (typeof standard?.validate !== "function" || standard.version !== 1)
    throw new InvalidInputError(
      `agenticFunction(${name}): input must be a Standard Schema validator (a zod 4, valibot or arktype schema), not ${typeof schema}.`,
    );
  return schema as StandardSchemaV1;
}

/**
 * The JSON Schema of the input, when the validator can say it (the Standard
 * JSON Schema interface: zod 4.2+, arktype, valibot through its adapter);
 * null otherwise, and the web page falls back to a plain JSON box.
 */
export function inputJsonSchema(schema: StandardSchemaV1): JsonSchema | null {
  const props = schema["~standard"] as Partial<StandardJSONSchemaV1.Props>;
  const converter = props.jsonSchema;
  if (typeof converter?.input !== "function") return null;
  try {
    return converter.input({ target: "draft-2020-12" });
  } catch {
    // A schema with parts JSON Schema cannot express (a transform, a custom check) is still a fine validator.
    return null;
  }
}

/**
 * Validates `input` and returns the validated value (with the schema's
 * defaults and transforms applied). Throws InvalidInputError naming each bad
 * field: `plan_day: input.mood: Invalid input: expected string, received undefined`.
 */
export async function validateInput(name: string, schema: StandardSchemaV1, input: unknown): Promise<unknown> {
  const result = await schema["~standard"].validate(input);
  if (!result.issues) return result.value;
  const problems = result.issues.map((issue) => `${fieldPath(issue.path)}: ${issue.message}`);
  throw new InvalidInputError(`${name}: ${problems.join("; ")}.`);
}

function fieldPath(path: StandardSchemaV1.Issue["path"]): string {
  const keys = (path ?? []).map((segment) => (typeof segment === "object" ? segment.key : segment));
  return ["input", ...keys]
    .map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
    .join("");
}

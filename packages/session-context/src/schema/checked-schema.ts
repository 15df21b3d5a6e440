// A schema a caller hands us: a Standard Schema (zod, valibot, arktype) validated by its own library, or a plain
// JSON Schema validated by Ajv. The JSON Schema sent to a provider is the library's own conversion, never one
// written here.
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { createRequire } from "node:module";
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";

/** A JSON Schema document. */
export type JsonSchemaObject = Record<string, unknown>;

/** The outcome of validating one value. */
export type SchemaValidation<Value> = { ok: true; value: Value } | { ok: false; problems: string[] };

/** A schema as the runtime uses it: its JSON Schema for the provider, and a validator. */
export interface CheckedSchema<Value> {
  /** The JSON Schema as a provider gets it (no `$schema`). */
  readonly jsonSchema: JsonSchemaObject;
  /** Validates a value: the schema's output (defaults and transforms applied), or the problems with their paths. */
  validate(value: unknown): Promise<SchemaValidation<Value>>;
}

/** How problems are named (`arguments.city`, `output.items[2]`) and how a bad schema is reported. */
export interface SchemaUse {
  /** The root of the paths in problems: "arguments", "output". */
  root: string;
  /** The error for a schema that cannot be used, given what is wrong with it. */
  invalid: (problem: string) => Error;
}

/** Checks `schema` once (a Standard Schema, or a plain JSON Schema object) and returns how to use it. */
export function checkedSchema(schema: unknown, use: SchemaUse): CheckedSchema<unknown> {
  if (schema === null || typeof schema !== "object")
    throw use.invalid("it must be a Standard Schema (zod, valibot, arktype) or a JSON Schema object");
  return "~standard" in schema
    ? standardSchema(schema as StandardSchemaV1, use)
    : jsonSchema(schema as JsonSchemaObject, use);
}

function standardSchema(schema: StandardSchemaV1, use: SchemaUse): CheckedSchema<unknown> {
  const standard = schema["~standard"] as StandardSchemaV1.Props & Partial<StandardJSONSchemaV1.Props>;
  if (typeof standard?.validate !== "function" || standard.version !== 1)
    throw use.invalid("it is not a Standard Schema validator (version 1)");
  let converted: JsonSchemaObject;
  try {
    if (typeof standard.jsonSchema?.input !== "function") throw new Error("the schema has no JSON Schema converter");
    converted = standard.jsonSchema.input({ target: "draft-2020-12" });
  } catch (error) {
    throw use.invalid(
      `it cannot say its JSON Schema (${(error as Error).message}), and the model needs one; use zod 4.2+ or ` +
        "arktype, valibot through toStandardJsonSchema, or a plain JSON Schema object",
    );
  }
  return {
    jsonSchema: withoutDialect(converted),
    async validate(value) {
      const result = await standard.validate(value);
      if (!result.issues) return { ok: true, value: result.value };
      return {
        ok: false,
        problems: result.issues.map((issue) => `${issuePath(use.root, issue.path)}: ${issue.message}`),
      };
    },
  };
}

/** One Ajv for every plain JSON Schema: it caches what it compiled. */
let ajv: Ajv2020 | undefined;

/**
 * Ajv, loaded on the first plain JSON Schema: its CommonJS files cost every process that imports the core about
 * 70 ms of start-up (a CLI command, a child process), and most programs give Standard Schemas or none.
 */
function newAjv(): Ajv2020 {
  const { Ajv2020: Ajv } = createRequire(import.meta.url)("ajv/dist/2020.js") as { Ajv2020: typeof Ajv2020 };
  return new Ajv({ allErrors: true, strict: false });
}

function jsonSchema(schema: JsonSchemaObject, use: SchemaUse): CheckedSchema<unknown> {
  let check: ValidateFunction;
  try {
    ajv ??= newAjv();
    check = ajv.compile(schema);
  } catch (error) {
    throw use.invalid(`it is not a valid JSON Schema: ${(error as Error).message}`);
  }
  return {
    jsonSchema: withoutDialect(schema),
    validate(value) {
      if (check(value)) return Promise.resolve({ ok: true, value });
      return Promise.resolve({ ok: false, problems: (check.errors ?? []).map((error) => ajvProblem(use.root, error)) });
    },
  };
}

/** Providers take JSON Schema without the `$schema` dialect key. */
function withoutDialect(schema: JsonSchemaObject): JsonSchemaObject {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

function issuePath(root: string, path: StandardSchemaV1.Issue["path"]): string {
  const keys = (path ?? []).map((segment) => (typeof segment === "object" ? segment.key : segment));
  return [root, ...keys]
    .map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
    .join("");
}

function ajvProblem(root: string, error: ErrorObject): string {
  const keys = error.instancePath
    .split("/")
    .slice(1)
    .map((key) => key.replace(/~1/g, "/").replace(/~0/g, "~"));
  const path = [root, ...keys]
    .map((key, index) => (index === 0 ? key : /^\d+$/.test(key) ? `[${key}]` : `.${key}`))
    .join("");
  return `${path}: ${error.message ?? "is not valid"}`;
}

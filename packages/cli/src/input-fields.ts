// The fields of an agentic function's input, from the JSON Schema its input
// schema gives (agentic.inputSchema), as `openprogram run <module> --help` prints them.
import type { JsonSchema } from "@openprogram/session-context";
import { formatTable } from "./table.js";

/** One line per field: name, type, required or default, description. */
export function formatInputFields(name: string, schema: JsonSchema | null): string {
  if (!schema) return `\nInput of ${name}: a JSON object (it declares no input schema).\n`;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const rows = Object.entries(properties).map(([field, property]) => [
    `  ${field}`,
    typeOf(property),
    required.has(field)
      ? "required"
      : "default" in property
        ? `default ${JSON.stringify(property.default)}`
        : "optional",
    typeof property.description === "string" ? property.description : "",
  ]);
  if (rows.length === 0) return `\nInput of ${name}: an object with no fields.\n`;
  const table = formatTable(["", "", "", ""], rows).split("\n").slice(1).join("\n").trimEnd();
  return `\nInput of ${name} (a JSON object, for --input or --input-file):\n${table}`;
}

function typeOf(property: JsonSchema): string {
  if (Array.isArray(property.enum)) return property.enum.map((value) => JSON.stringify(value)).join(" | ");
  if ("const" in property) return JSON.stringify(property.const);
  if (property.type === "array") {
    const items = property.items as JsonSchema | undefined;
    return `${items ? typeOf(items) : "any"}[]`;
  }
  if (Array.isArray(property.type)) return property.type.join(" | ");
  if (typeof property.type === "string") return property.type;
  if (Array.isArray(property.anyOf)) return (property.anyOf as JsonSchema[]).map(typeOf).join(" | ");
  return "any";
}

import { clipText } from "./clip-text.js";

/**
 * What a value is, for error messages ("must be a string, not …"): `null`,
 * `an array`, `a Map object`, `the string "…"`, `the number 42`, ... Strings
 * are shown clipped, so a huge value never floods a message.
 */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(clipText(value, 40))}`;
    case "number":
    case "boolean":
      return `the ${typeof value} ${String(value)}`;
    case "function":
      return "a function";
    case "bigint":
      return "a bigint";
    case "symbol":
      return "a symbol";
    case "object":
      return describeObject(value);
    default:
      return `a ${typeof value}`;
  }
}

function describeObject(value: object): string {
  const prototype = Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null;
  const name = prototype?.constructor?.name;
  // A plain object is just "an object"; an instance names its class, which says why it is not plain data.
  if (prototype === null || prototype === Object.prototype || typeof name !== "string" || name === "")
    return "an object";
  return `a ${name} object`;
}

/**
 * Turns a call's arguments or result into something a node can store: plain
 * JSON values pass through; functions, class instances the model cannot use,
 * cycles, BigInts and non-finite numbers become readable placeholders, so
 * recording never makes the user's call fail.
 */
export function toRecordable(value: unknown, depth = 0, seen: Set<object> = new Set()): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "bigint":
      return `${value.toString()}n`;
    case "function":
      return `<function ${value.name || "anonymous"}>`;
    case "symbol":
      return value.toString();
    default:
      break;
  }
  if (depth > 64) return "<too deep>";
  const object = value;
  if (seen.has(object)) return "<cycle>";
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? "<invalid date>" : object.toISOString();
  if (object instanceof Error) return { name: object.name, message: object.message };
  if (typeof (object as { toJSON?: unknown }).toJSON === "function") {
    return toRecordable((object as { toJSON: () => unknown }).toJSON(), depth + 1, seen);
  }
  seen.add(object);
  try {
    if (Array.isArray(object)) return object.map((item) => toRecordable(item, depth + 1, seen));
    if (object instanceof Map)
      return Object.fromEntries(
        [...object].map(([k, v]) => [mapKey(k, depth, seen), toRecordable(v, depth + 1, seen)]),
      );
    if (object instanceof Set) return [...object].map((item) => toRecordable(item, depth + 1, seen));
    if (ArrayBuffer.isView(object)) return `<${object.constructor.name} ${object.byteLength} bytes>`;
    const prototype = Object.getPrototypeOf(object) as object | null;
    if (prototype !== null && prototype !== Object.prototype) {
      const name = (object.constructor as { name?: string } | undefined)?.name ?? "object";
      return `<${name}>`;
    }
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(object)) {
      if (item === undefined) continue;
      result[key] = toRecordable(item, depth + 1, seen);
    }
    return result;
  } finally {
    seen.delete(object);
  }
}

/** A Map key as an object key: strings as they are, anything else as its recorded JSON (objects without a prototype included). */
function mapKey(key: unknown, depth: number, seen: Set<object>): string {
  if (typeof key === "string") return key;
  if (typeof key === "symbol") return key.toString();
  if (key === null || typeof key !== "object") return String(key);
  return JSON.stringify(toRecordable(key, depth + 1, seen)) ?? "<key>";
}

/**
 * JSON with object keys sorted and no whitespace: the same value always
 * renders to the same bytes, whichever entry point built it.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, new Set())) ?? "null";
}

function sortKeys(value: unknown, seen: Set<object>): unknown {
  if (value === null || typeof value !== "object") return value;
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === "function") return sortKeys(withJson.toJSON(), seen);
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  let result: unknown;
  if (Array.isArray(value)) {
    result = value.map((item) => sortKeys(item, seen));
  } else {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key], seen);
    result = sorted;
  }
  seen.delete(value);
  return result;
}

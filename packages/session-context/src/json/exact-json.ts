/**
 * Where `value` stops being plain JSON that survives a round trip unchanged
 * (`"input.when is a Date"`), or null when it is exactly JSON. Replay returns
 * recorded values in place of live ones, so it may only do that for values
 * the record holds exactly. Object properties that are `undefined` are fine
 * (JSON leaves them out, and reading them gives `undefined` either way).
 */
export function inexactJsonPath(value: unknown, path: string, depth = 0): string | null {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0) ? null : `${path} is ${String(value)}`;
    case "object":
      break;
    default:
      return `${path} is ${typeof value === "undefined" ? "undefined" : `a ${typeof value}`}`;
  }
  if (depth > 64) return `${path} is nested too deeply`;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const problem = inexactJsonPath(value[index], `${path}[${index}]`, depth + 1);
      if (problem !== null) return problem;
    }
    return null;
  }
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype !== null && prototype !== Object.prototype) {
    const name = (value.constructor as { name?: string } | undefined)?.name ?? "object";
    return `${path} is a ${name}`;
  }
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const problem = inexactJsonPath(item, `${path}.${key}`, depth + 1);
    if (problem !== null) return problem;
  }
  return null;
}

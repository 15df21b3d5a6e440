import { InvalidInputError } from "@openprogram/session-context";
import { assertNestingDepth } from "@openprogram/session-context/host";
import { describeValue } from "@openprogram/session-context/messages";

/**
 * Throws InvalidInputError, naming the offending path, unless `input` is
 * undefined or a plain JSON object. The child receives a JSON copy, so
 * anything JSON would drop or change (functions, Dates, Maps, NaN, class
 * instances, cycles) would make the child see different input than the caller
 * passed: refused up front instead, as is nesting deeper than MAX_NESTING_DEPTH.
 */
export function assertJsonInput(input: unknown, label: string): void {
  if (input === undefined) return;
  if (!isPlainObject(input)) {
    throw new InvalidInputError(
      `${label}: input must be one plain JSON object (an agentic function takes one input object), not ${describeValue(input)}.`,
    );
  }
  // Before the recursive walk below: a deep input would overflow its stack.
  assertNestingDepth(input, `${label}: input`);
  visit(input, "input", new Set(), label);
}

function visit(value: unknown, path: string, ancestors: Set<object>, label: string): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) fail(label, path, `the number ${String(value)}, which JSON turns into null`);
    return;
  }
  if (typeof value !== "object") fail(label, path, describeValue(value));
  const object = value;
  if (ancestors.has(object)) fail(label, path, "a reference back to one of its parents (a cycle)");
  if (!Array.isArray(object) && !isPlainObject(object)) fail(label, path, describeValue(object));
  ancestors.add(object);
  if (Array.isArray(object)) {
    object.forEach((item, index) => {
      if (item === undefined) fail(label, `${path}[${index}]`, "undefined, which JSON turns into null");
      visit(item, `${path}[${index}]`, ancestors, label);
    });
  } else {
    for (const [key, item] of Object.entries(object)) {
      // An undefined property is simply absent on the other side, as in a JSON body.
      if (item !== undefined)
        visit(
          item,
          `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`,
          ancestors,
          label,
        );
    }
  }
  ancestors.delete(object);
}

function fail(label: string, path: string, what: string): never {
  throw new InvalidInputError(
    `${label}: ${path} is ${what}. Input to a child process must be plain JSON (objects, arrays, strings, finite numbers, booleans, null); convert it first (e.g. a Date to an ISO string).`,
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

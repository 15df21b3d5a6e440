import { describe, expect, it } from "vitest";
import { agenticFunction, InvalidInputError, NotAgenticFunctionError } from "../src/index.js";
import { resolveAgenticExport } from "../src/entries/host.js";

const alpha = agenticFunction({ name: "alpha", doc: "A." }, async () => "a");
const beta = agenticFunction({ name: "beta", doc: "B." }, async () => "b");
const plain = (): string => "plain";

/** A module namespace as `import()` gives it: no prototype, only the exports. */
function namespace(exports: Record<string, unknown>): Record<string, unknown> {
  return Object.assign(Object.create(null) as Record<string, unknown>, exports);
}

describe("resolveAgenticExport: one rule for every entry", () => {
  it("takes the named export when one is given, even beside an agentic default", () => {
    const resolved = resolveAgenticExport(namespace({ default: alpha, beta }), "beta");
    expect(resolved.exportName).toBe("beta");
    expect(resolved.fn).toBe(beta);
  });

  it("else the default export when it is agentic, even beside other agentic exports", () => {
    const resolved = resolveAgenticExport(namespace({ default: alpha, beta, plain }));
    expect(resolved).toEqual({ exportName: "default", fn: alpha });
  });

  it("else the only agentic export, whatever else the module exports", () => {
    const resolved = resolveAgenticExport(namespace({ default: { retries: 3 }, beta, plain, VERSION: "1" }));
    expect(resolved).toEqual({ exportName: "beta", fn: beta });
  });

  it("several agentic exports and no agentic default: InvalidInputError naming them and how to pick one", () => {
    const choose = (): unknown =>
      resolveAgenticExport(namespace({ alpha, beta, plain }), undefined, { module: "m.mjs" });
    expect(choose).toThrow(InvalidInputError);
    expect(choose).toThrow(
      "m.mjs exports 2 agentic functions (alpha, beta) and no agentic default export; pick one, e.g. m.mjs#alpha.",
    );
  });

  it("no agentic export: NotAgenticFunctionError saying how to declare one", () => {
    const choose = (): unknown => resolveAgenticExport(namespace({ plain, default: plain }));
    expect(choose).toThrow(NotAgenticFunctionError);
    expect(choose).toThrow(
      "the module exports no agentic function. Export one declared with agenticFunction({ name, doc }, impl) from @openprogram/session-context.",
    );
  });

  it("a named export that does not exist: InvalidInputError listing the agentic exports", () => {
    const choose = (): unknown => resolveAgenticExport(namespace({ alpha, beta }), "gamma", { module: "m.mjs" });
    expect(choose).toThrow(InvalidInputError);
    expect(choose).toThrow("m.mjs has no export named 'gamma'. Its agentic exports: alpha, beta.");
  });

  it("a named export that is not agentic: NotAgenticFunctionError saying what it is instead", () => {
    const cases: Array<[unknown, string]> = [
      [plain, "a plain function"],
      [{ retries: 3 }, "an object"],
      ["text", 'the string "text"'],
      [null, "null"],
    ];
    for (const [value, what] of cases) {
      const choose = (): unknown => resolveAgenticExport(namespace({ value }), "value", { module: "m.mjs" });
      expect(choose, what).toThrow(NotAgenticFunctionError);
      expect(choose, what).toThrow(
        `Export 'value' of m.mjs is not an agentic function (it is ${what}). Declare it with agenticFunction({ name, doc }, impl) from @openprogram/session-context. It exports no agentic function.`,
      );
    }
  });

  it("only the module's own exports count, not what an object inherits", () => {
    const choose = (): unknown => resolveAgenticExport({ alpha }, "toString");
    expect(choose).toThrow("has no export named 'toString'");
  });
});

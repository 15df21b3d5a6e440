// The package's entry points (issue 31): the root is what a program author writes programs
// with, pinned here name by name so that it grows only on purpose; everything else is in a
// named subpath (package.json `exports`, src/entries/*.ts), and each subpath resolves from
// the built package as a user's install resolves it.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { OpenProgramError } from "../src/errors.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
  name: string;
  exports: Record<string, string | { types: string; import: string }>;
};
/** Every subpath of `exports` with its built files (the manifest itself left out). */
const entries = Object.entries(manifest.exports).flatMap(([subpath, target]) =>
  typeof target === "string" ? [] : [{ subpath, ...target }],
);
/** The source an entry's built file comes from (`./dist/entries/store.js` -> `src/entries/store.ts`). */
const sourceOf = (built: string): string =>
  join(packageDir, built.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"));

const ROOT_VALUES = [
  "agenticFunction",
  "AnswerRequiredError",
  "AskTimeoutError",
  "askUser",
  "AskUserUnavailableError",
  "AttachmentMissingError",
  "BudgetExceededError",
  "CancelledError",
  "chat",
  "ContextVersionMismatchError",
  "CorruptMetaError",
  "currentAsker",
  "currentCallId",
  "currentRuntime",
  "currentSession",
  "currentSessionIfAny",
  "currentSignal",
  "currentTurnId",
  "deserializeError",
  "GitError",
  "hasErrorCode",
  "hasSessionContext",
  "InputTooLargeError",
  "InternalError",
  "InvalidAnswerError",
  "InvalidBudgetError",
  "InvalidInputError",
  "InvalidModelOutputError",
  "InvalidNodeError",
  "InvalidSessionIdError",
  "InvalidToolError",
  "isAgenticFunction",
  "isCancellation",
  "isSuspension",
  "isTool",
  "ModelTimeoutError",
  "NodeNotFoundError",
  "NodeNotOnBranchError",
  "NoPendingQuestionError",
  "NotAgenticFunctionError",
  "NotASessionError",
  "NothingToResumeError",
  "OpenProgramError",
  "PriceTableError",
  "ProviderConfigError",
  "ProviderError",
  "RateLimitedError",
  "RecordingFormatError",
  "RecordingMissingError",
  "RemoteError",
  "ReplayedFailureError",
  "ReplayExhaustedError",
  "ReplayMismatchError",
  "RuntimeMissingError",
  "ScriptExhaustedError",
  "serializeError",
  "SessionBusyError",
  "sessionContext",
  "SessionContextMissingError",
  "SessionExistsError",
  "SessionNotFoundError",
  "StoreLockTimeoutError",
  "StoreWriteError",
  "SummaryHeadError",
  "tool",
  "ToolLoopLimitError",
  "toOpenProgramError",
  "TurnNotFoundError",
  "TurnNotResumableError",
  "TurnSuspendedError",
  "UnpricedModelError",
  "UnsafeGitConfigError",
  "UnsafeSessionPathError",
  "UntrustedProgramError",
  "UntrustedProjectConfigError",
  "UserDeclinedError",
];

const ROOT_TYPES = [
  "AgenticCallContext",
  "AgenticDeclaration",
  "AgenticFunction",
  "AgenticFunctionSpec",
  "Asker",
  "AskOutcome",
  "AskRequest",
  "AskResponse",
  "AskUserOptions",
  "BudgetLimit",
  "Budgets",
  "CallFrame",
  "ChatOptions",
  "CompactionEvent",
  "CompactionReason",
  "ContentBlock",
  "CurrentSession",
  "DeltaEvent",
  "ErrorCode",
  "ErrorCodesOf",
  "ExecContent",
  "ExecOptions",
  "ExposeMode",
  "InlineData",
  "JsonSchema",
  "JsonSchemaObject",
  "NeedsApproval",
  "NodeEvent",
  "QuestionClosedEvent",
  "QuestionEvent",
  "RetryEvent",
  "RetryInfo",
  "Runtime",
  "SerializedError",
  "SessionContextOptions",
  "SessionDB",
  "SessionEvent",
  "SessionEventSink",
  "SessionHandle",
  "SessionNode",
  "SessionStatus",
  "StatusEvent",
  "Tool",
  "ToolArguments",
  "ToolCallEvent",
  "ToolEntry",
  "ToolExecuteOptions",
  "ToolResultEvent",
  "ToolSpec",
];

const byName = (a: string, b: string): number => a.localeCompare(b, "en", { sensitivity: "base" }) || (a < b ? -1 : 1);

/** Each entry file's exports as the compiler sees them, split into values and type-only names. */
function compiledExports(): Map<string, { values: string[]; types: string[] }> {
  const files = entries.map((entry) => sourceOf(entry.import));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const result = new Map<string, { values: string[]; types: string[] }>();
  for (const entry of entries) {
    const source = program.getSourceFile(sourceOf(entry.import));
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`the compiler did not load ${entry.import}`);
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(module)) {
      // A value re-exported with `export type` anywhere along the chain is a type to importers.
      let target: ts.Symbol | undefined = symbol;
      let typeOnly = false;
      while (target && target.flags & ts.SymbolFlags.Alias) {
        typeOnly ||= (target.declarations ?? []).some((declaration) =>
          ts.isTypeOnlyImportOrExportDeclaration(declaration),
        );
        target = checker.getImmediateAliasedSymbol(target);
      }
      const value = !typeOnly && target !== undefined && (target.flags & ts.SymbolFlags.Value) !== 0;
      (value ? values : types).push(symbol.name);
    }
    result.set(entry.subpath, { values: values.sort(byName), types: types.sort(byName) });
  }
  return result;
}

describe("the root entry", () => {
  const compiled = compiledExports();

  it("exports exactly the program author's names: add one here on purpose, or put it in a subpath", () => {
    expect(compiled.get(".")).toEqual({ values: ROOT_VALUES, types: ROOT_TYPES });
  });

  it("exports every error class of every entry, so `catch` needs no subpath", async () => {
    const root = (await import("../src/index.js")) as Record<string, unknown>;
    const errorClasses: string[] = [];
    for (const entry of entries) {
      const module = (await import(pathToFileURL(sourceOf(entry.import)).href)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(module))
        if (typeof value === "function" && value.prototype instanceof OpenProgramError) errorClasses.push(name);
    }
    expect(errorClasses.length).toBeGreaterThan(40);
    for (const name of new Set(errorClasses)) expect(Object.keys(root), name).toContain(name);
  });

  it("is, like each subpath, an entry file that only re-exports: the logic stays in the folders", () => {
    for (const entry of entries) {
      const file = sourceOf(entry.import);
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022);
      if (!file.includes("/entries/") && entry.subpath !== ".") continue; // `./testing`, `./terminal-text`: older entries
      for (const statement of source.statements)
        expect(ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined, file).toBe(true);
    }
  });

  it("every file in src/entries is a subpath of the package", () => {
    const listed = entries.map((entry) => entry.import);
    for (const file of readdirSync(join(packageDir, "src/entries")))
      expect(listed).toContain(`./dist/entries/${file.replace(/\.ts$/, ".js")}`);
  });
});

describe("the built package", () => {
  it("resolves every `exports` entry by its name, with the same names as its source, and its types", async () => {
    // Node's own resolution of the package's `exports` (a package may import itself by name), in a fresh process.
    const specifiers = entries.map((entry) =>
      entry.subpath === "." ? manifest.name : `${manifest.name}/${entry.subpath.slice(2)}`,
    );
    const script =
      `const names = {};\n` +
      `for (const specifier of ${JSON.stringify(specifiers)}) names[specifier] = Object.keys(await import(specifier)).sort();\n` +
      `process.stdout.write(JSON.stringify(names));\n`;
    const built = JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: packageDir, encoding: "utf8" }),
    ) as Record<string, string[]>;
    for (const [index, entry] of entries.entries()) {
      const source = (await import(pathToFileURL(sourceOf(entry.import)).href)) as Record<string, unknown>;
      expect(built[specifiers[index] as string], specifiers[index]).toEqual(Object.keys(source).sort());
      expect(existsSync(join(packageDir, entry.types)), entry.types).toBe(true);
    }
  });
});

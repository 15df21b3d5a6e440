// @ts-check
import eslint from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";
import { readFileSync } from "node:fs";

/** The core's public subpaths (`store`, `testing`, ...): its package.json `exports`, the one list. */
const CORE_SUBPATHS = Object.keys(
  /** @type {{ exports: Record<string, unknown> }} */ (
    JSON.parse(readFileSync(new URL("./packages/session-context/package.json", import.meta.url), "utf8"))
  ).exports,
)
  .filter((subpath) => subpath.startsWith("./"))
  .map((subpath) => subpath.slice(2));

const TO_THE_CORE =
  "Only @openprogram/session-context installs context or touches storage. Wrap the entry in sessionContext() and use the core's public functions (openStore, listSessions, ...); if you need more, add a public function to the core.";

/** The boundary: what code outside packages/session-context may not import. */
export const boundaryRules = {
  "@typescript-eslint/no-restricted-imports": [
    "error",
    {
      paths: [
        { name: "node:async_hooks", message: TO_THE_CORE },
        { name: "async_hooks", message: TO_THE_CORE },
        { name: "simple-git", message: TO_THE_CORE },
        ...["@openprogram/session-context", "@openprogram/session-context/store"].map((name) => ({
          name,
          importNames: ["SessionDB", "SessionNodeWriter"],
          allowTypeImports: true,
          message: `The store classes are the core's internals. ${TO_THE_CORE}`,
        })),
      ],
      patterns: [
        {
          regex: `^@openprogram/session-context/(?!(${CORE_SUBPATHS.map((subpath) => subpath.replace(/[.]/g, "\\.")).join("|")})$).+`,
          message: `Deep imports of the core are not public API. ${TO_THE_CORE}`,
        },
        {
          regex: "session-context/src(/|$)",
          message: `Import the core through its package name. ${TO_THE_CORE}`,
        },
      ],
    },
  ],
  "no-restricted-syntax": [
    "error",
    { selector: "MemberExpression[property.name='enterWith']", message: `enterWith leaks context. ${TO_THE_CORE}` },
    { selector: "NewExpression[callee.name='AsyncLocalStorage']", message: TO_THE_CORE },
  ],
};

const INTERNAL_DOOR =
  "store/internal.ts is the core's internal door to a store (synchronous readers, the session lock, registry repairs): only the core's own modules and tests use it. Use SessionDB's public, async methods; if you need more, add a public function to the core.";

/**
 * The store's internal door (packages/session-context/src/store/internal.ts): nothing outside the core's src/ and
 * its own tests imports it, whatever the path (a relative path, the built dist/, the old store-internals name).
 * The core rule `no-restricted-imports`, so it adds to the boundary's `@typescript-eslint/no-restricted-imports`
 * instead of replacing it.
 */
export const internalDoorRules = {
  "no-restricted-imports": [
    "error",
    { patterns: [{ regex: "(^|/)store/(internal|store-internals)(\\.[cm]?[jt]s)?$", message: INTERNAL_DOOR }] },
  ],
};

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "**/.turbo/**",
      "**/coverage/**",
      "**/.copy-test-*/**",
      "tools/lint-fixtures/**",
      "**/web/vendor/**",
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "*.mjs", "scripts/*.mjs", "tools/lint-fixtures/*.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "error",
      // Store and runtime methods are async by contract even where today's body is synchronous.
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // Outside the core, the boundary holds.
    files: [
      "packages/*/src/**/*.ts",
      "packages/*/test/**/*.ts",
      "packages/*/bench/**/*.ts",
      "tools/lint-fixtures/**/*.ts",
    ],
    ignores: ["packages/session-context/**"],
    rules: boundaryRules,
  },
  {
    // The store's internal door: only the core's own modules and tests go through it.
    files: ["**/*.ts", "**/*.mts", "**/*.js", "**/*.mjs"],
    ignores: ["packages/session-context/src/**", "packages/session-context/test/**"],
    rules: internalDoorRules,
  },
  {
    // Inside the core, a store registers its internals in one place: SessionDB's constructor.
    files: ["packages/session-context/src/**/*.ts", "packages/session-context/test/**/*.ts"],
    ignores: ["packages/session-context/src/store/session-db.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "(^|/)internal(\\.js)?$",
              importNames: ["registerStoreInternals"],
              message: "Only SessionDB's constructor registers a store's internals (store/session-db.ts).",
            },
          ],
        },
      ],
    },
  },
  {
    // The CLI talks to a terminal; tests, benchmarks and scripts print their findings.
    files: ["packages/cli/src/**/*.ts", "**/test/**/*.ts", "**/bench/**/*.ts", "scripts/**", "**/*.test.ts"],
    rules: { "no-console": "off" },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // The web page runs in the browser.
    files: ["packages/dispatcher/web/**/*.js"],
    languageOptions: { globals: { ...globals.browser } },
  },
);

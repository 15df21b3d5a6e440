#!/usr/bin/env node
// Part of `pnpm lint`: npm test typechecks and lints the whole tree in one tsc and one ESLint (the root's
// `typecheck:tree` and `lint:tree`) instead of each package's own `typecheck` and `lint`. This holds the two
// equal: every tsconfig a package's `typecheck` checks is one `typecheck:tree` checks, and every package's
// `lint` is `eslint .` over a folder `lint:tree` lints. A package that checks something else fails here, so
// nothing it checks is left out of npm test.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const rootScripts = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts;
const problems = [];

/** The files a script's arguments name, `*` expanded within one folder level (as sh does). */
function namedFiles(script, command) {
  const words = script.replace(command, "").trim().split(/\s+/);
  return words.flatMap((word) => {
    if (!word.includes("*")) return [word];
    const [before, after] = word.split("*");
    const folder = join(root, before);
    if (!existsSync(folder)) return [];
    return readdirSync(folder)
      .map((name) => `${before}${name}${after}`)
      .filter((path) => existsSync(join(root, path)));
  });
}

const treeTsconfigs = new Set(namedFiles(rootScripts["typecheck:tree"], "tsc -b"));
// tsc -b emits what a tsconfig lets it, and typecheck:tree passes no --noEmit: each tsconfig it checks must say
// noEmit itself (a package's own typecheck may pass it on the command line instead).
for (const tsconfig of treeTsconfigs)
  if (!/"noEmit":\s*true/.test(readFileSync(join(root, tsconfig), "utf8")))
    problems.push(`${tsconfig} does not set "noEmit": true, and typecheck:tree (tsc -b) would emit its files`);
const treeLinted = namedFiles(rootScripts["lint:tree"], "eslint");

for (const group of ["packages", "tests"]) {
  for (const name of readdirSync(join(root, group))) {
    const manifestPath = join(root, group, name, "package.json");
    if (!existsSync(manifestPath)) continue;
    const folder = `${group}/${name}`;
    const scripts = JSON.parse(readFileSync(manifestPath, "utf8")).scripts ?? {};
    if (scripts.typecheck !== undefined) {
      const steps = scripts.typecheck.split("&&").map((step) => step.trim());
      for (const step of steps) {
        const match = /^tsc -p (\S+)( --noEmit)?$/.exec(step);
        if (!match) problems.push(`${folder}: its typecheck step "${step}" is not "tsc -p <tsconfig>"`);
        else if (!treeTsconfigs.has(`${folder}/${match[1]}`))
          problems.push(`${folder}/${match[1]} is typechecked by the package but not by the root's typecheck:tree`);
      }
    }
    if (scripts.lint !== undefined) {
      if (scripts.lint !== "eslint .") problems.push(`${folder}: its lint is "${scripts.lint}", not "eslint ."`);
      else if (!treeLinted.some((linted) => !relative(linted, folder).startsWith("..")))
        problems.push(`${folder} is linted by the package but not by the root's lint:tree`);
    }
  }
}

if (problems.length > 0) {
  console.error(`The tree's checks differ from the packages' own:\n${problems.map((line) => `  ${line}`).join("\n")}`);
  process.exit(1);
}

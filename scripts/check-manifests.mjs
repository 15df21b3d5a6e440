#!/usr/bin/env node
// Part of `pnpm lint`: every published package's runtime dependencies are plain
// version ranges, so `npm pack` / `npm install` of a tarball work without pnpm
// (workspace: and catalog: would fail with EUNSUPPORTEDPROTOCOL), and they
// still agree with the workspace: a sibling's range admits its version, and a
// dependency the catalog also pins for tests is ^ that same version.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { manifestOf, PUBLISHED, root } from "./publishable.mjs";

const catalog = Object.fromEntries(
  [...readFileSync(join(root, "pnpm-workspace.yaml"), "utf8").matchAll(/^ {2}"?([@\w/.-]+)"?: ([\d.]+)$/gm)].map(
    (match) => [match[1], match[2]],
  ),
);
const versions = Object.fromEntries(PUBLISHED.map((name) => [`@openprogram/${name}`, manifestOf(name).version]));
const problems = [];

for (const name of PUBLISHED) {
  const manifest = manifestOf(name);
  for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
    for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
      const where = `packages/${name}/package.json ${field}.${dependency} = "${range}"`;
      const expected =
        dependency in versions ? `^${versions[dependency]}` : catalog[dependency] && `^${catalog[dependency]}`;
      if (/^(workspace|catalog):/.test(range))
        problems.push(`${where}: npm cannot install this; write a version range (${expected ?? "^x.y.z"}).`);
      else if (!/^\^\d+\.\d+\.\d+$/.test(range))
        problems.push(`${where}: write a caret range (^x.y.z), so installs pick up fixes as the install test expects.`);
      else if (expected && range !== expected)
        problems.push(`${where}: the workspace has ${expected.slice(1)}; write "${expected}".`);
    }
  }
}

if (problems.length > 0) {
  process.stderr.write(`check-manifests: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}\n`).join("")}`);
  process.exit(1);
}

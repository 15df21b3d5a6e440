// Writing an artifact (temp file, fsync, rename, directory fsync; versioning an
// existing file) beside a plain writeFileSync of the same bytes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report } from "@openprogram/bench-kit";
import { ArtifactWriter } from "../src/index.js";

const PACKAGE = "@openprogram/research";
const CONTENT = `## Method\n\n${"A sentence of a paper section. ".repeat(130)}\n`;

/** Times new and versioned artifact writes against plain writes, interleaved. */
export async function benchArtifacts(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "openprogram-bench-artifacts-"));
  try {
    const rounds = iterations(300);
    const fresh: number[] = [];
    const versioned: number[] = [];
    const plain: number[] = [];
    const writer = new ArtifactWriter(join(dir, "work"));
    writer.write("paper/rewritten.md", CONTENT);
    for (let round = 0; round < rounds; round++) {
      let started = performance.now();
      writeFileSync(join(dir, `plain-${round}.md`), CONTENT);
      plain.push((performance.now() - started) * 1000);
      started = performance.now();
      writer.write(`paper/new-${round}.md`, CONTENT);
      fresh.push((performance.now() - started) * 1000);
      started = performance.now();
      writer.write("paper/rewritten.md", `${CONTENT}${round}\n`);
      versioned.push((performance.now() - started) * 1000);
    }
    const baseline = median(plain);
    const common = {
      package: PACKAGE,
      unit: "µs" as const,
      baseline,
      baselineLabel: "writeFileSync",
      target: "none (issue 7 sets no speed target)",
      samples: rounds,
    };
    report({ ...common, metric: "artifact write, new file (4 KB, durable)", median: median(fresh) });
    report({
      ...common,
      metric: "artifact write over an earlier version (4 KB, durable, versioned)",
      median: median(versioned),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ArtifactWriteError, ArtifactWriter } from "../src/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "openprogram-artifacts-"));
});
afterEach(() => {
  removeTree(dir);
});

const read = (...parts: string[]): string => readFileSync(join(dir, ...parts), "utf8");

describe("ArtifactWriter", () => {
  it("creates directories and writes whole files, leaving no temp file", () => {
    const writer = new ArtifactWriter(dir);
    expect(writer.write("literature review/review.md", "# Review\n")).toBe(join(dir, "literature review", "review.md"));
    expect(read("literature review", "review.md")).toBe("# Review\n");
    expect(readdirSync(join(dir, "literature review"))).toEqual(["review.md"]);
    expect(writer.written).toEqual(["literature review/review.md"]);
    expect(writer.versioned).toEqual([]);
  });

  it("writes artifacts private: files 0600 in the folders it creates 0700, an existing work dir keeps its mode", () => {
    chmodSync(dir, 0o755);
    const writer = new ArtifactWriter(dir);
    writer.write("literature review/review.md", "# Review\n");
    writer.write("paper/sections/related work.md", "text\n");
    writer.write("paper/sections/related work.md", "revised\n");
    const mode = (...parts: string[]): number => statSync(join(dir, ...parts)).mode & 0o777;
    expect(mode()).toBe(0o755);
    for (const folder of [["literature review"], ["paper"], ["paper", "sections"]]) expect(mode(...folder)).toBe(0o700);
    for (const file of [
      ["literature review", "review.md"],
      ["paper", "sections", "related work.md"],
      ["paper", "sections", "related work.v1.md"],
    ])
      expect(mode(...file)).toBe(0o600);
  });

  it("never overwrites: an existing file with other content becomes <name>.v<N>.md, v1 the oldest", () => {
    new ArtifactWriter(dir).write("paper/paper.md", "first\n");
    const second = new ArtifactWriter(dir);
    second.write("paper/paper.md", "second\n");
    second.write("paper/paper.md", "third\n");
    expect(read("paper", "paper.md")).toBe("third\n");
    expect(read("paper", "paper.v1.md")).toBe("first\n");
    expect(read("paper", "paper.v2.md")).toBe("second\n");
    expect(second.versioned).toEqual(["paper/paper.v1.md", "paper/paper.v2.md"]);
    expect(second.written).toEqual(["paper/paper.md"]);
  });

  it("numbers after the highest existing version, and leaves identical content alone", () => {
    mkdirSync(join(dir, "paper"));
    writeFileSync(join(dir, "paper", "method.md"), "same\n");
    writeFileSync(join(dir, "paper", "method.v3.md"), "old\n");
    const writer = new ArtifactWriter(dir);
    writer.write("paper/method.md", "same\n");
    expect(writer.versioned).toEqual([]);
    writer.write("paper/method.md", "new\n");
    expect(writer.versioned).toEqual(["paper/method.v4.md"]);
    expect(read("paper", "method.v4.md")).toBe("same\n");
    expect(readdirSync(join(dir, "paper")).sort()).toEqual(["method.md", "method.v3.md", "method.v4.md"]);
  });

  it("fails with ArtifactWriteError naming the artifact, touching nothing already there", () => {
    writeFileSync(join(dir, "paper"), "a file where the paper directory should be");
    const writer = new ArtifactWriter(dir);
    let error: unknown;
    try {
      writer.write("paper/paper.md", "text");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ArtifactWriteError);
    expect(error).toMatchObject({ code: "artifact_write_failed", artifact: "paper/paper.md", workDir: dir });
    expect((error as Error).message).toMatch(/"paper\/paper\.md" .*\((EEXIST|ENOTDIR)\)/);
    expect(read("paper")).toBe("a file where the paper directory should be");
    expect(readdirSync(dir)).toEqual(["paper"]);
    expect(writer.written).toEqual([]);
  });

  it("removes the temp file a killed writer left beside the artifact, and keeps one of a live process", async () => {
    mkdirSync(join(dir, "paper"));
    // A pid that was a process and is no more: a finished child's.
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(dir, "paper", `.paper.md.${deadPid}.0badc0de.tmp`), "half a paper");
      writeFileSync(join(dir, "paper", `.paper.md.${live.pid}.0badc0de.tmp`), "a paper being written");
      writeFileSync(join(dir, "paper", `.notes.md.${deadPid}.0badc0de.tmp`), "another artifact's");
      new ArtifactWriter(dir).write("paper/paper.md", "the paper\n");
      expect(readdirSync(join(dir, "paper")).sort()).toEqual(
        [`.notes.md.${deadPid}.0badc0de.tmp`, `.paper.md.${live.pid}.0badc0de.tmp`, "paper.md"].sort(),
      );
      expect(read("paper", "paper.md")).toBe("the paper\n");
    } finally {
      live.kill("SIGKILL");
      await new Promise((resolve) => live.once("exit", resolve));
    }
  });
});

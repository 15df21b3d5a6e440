import { createHash } from "node:crypto";
import { agenticFunction, InternalError, type AgenticFunction } from "@openprogram/session-context";
import type { ArtifactWriter } from "./artifact-writer.js";

/** What write_artifact is given: the file, and the SHA-256 (hex) of the content it writes. */
export interface ArtifactWriteInput {
  artifact: string;
  sha256: string;
}

/** What write_artifact records: the file, its content's SHA-256, and the earlier content it kept as a version. */
export interface ArtifactWriteOutcome {
  artifact: string;
  sha256: string;
  /** The version the earlier content was kept as (relative to the work dir), or null when nothing was replaced. */
  versioned: string | null;
}

/** The doc of write_artifact (hidden from prompts: no model ever reads it). */
export const WRITE_ARTIFACT_DOC = `Writes one file of the research run into its work dir: whole and durably, keeping any earlier content under a version name. Recorded so that a resumed run takes the recorded outcome instead of writing the file again.`;

/**
 * The run's artifact writes, each recorded as a `write_artifact` call
 * (hidden: it never shows in a prompt) under research_agent. A resumed run
 * replays the record: a write that finished gives its recorded outcome and
 * leaves the file alone, so a file the run wrote, then replaced (the draft
 * paper, then the revised one), is not written back and versioned again.
 * A write stopped mid-way runs again and finishes what it started, without a
 * second version. The node holds the content's digest, not the content: the
 * stages' outputs already hold it, and Python OpenProgram reads these nodes as
 * any code call.
 */
export class RecordedArtifacts {
  /** Artifacts written by this run, relative to the work dir, in order, each once. */
  readonly written: string[] = [];
  /** Earlier files kept as versions by this run, relative to the work dir. */
  readonly versioned: string[] = [];
  /** The content of the write in flight, by digest (the call's input holds only the digest). */
  private readonly pending = new Map<string, string>();
  /** The digest this run last wrote to each artifact. */
  private readonly lastDigest = new Map<string, string>();
  private readonly writeArtifact: AgenticFunction<ArtifactWriteInput, ArtifactWriteOutcome>;

  constructor(readonly files: ArtifactWriter) {
    this.writeArtifact = agenticFunction<ArtifactWriteInput, ArtifactWriteOutcome>(
      { name: "write_artifact", doc: WRITE_ARTIFACT_DOC, expose: "hidden" },
      ({ artifact, sha256 }) => this.writeNow(artifact, sha256),
    );
  }

  /** Writes `artifact` ('/'-separated, relative to the work dir), or takes the recorded outcome of writing it. */
  async write(artifact: string, content: string): Promise<void> {
    const sha256 = createHash("sha256").update(content, "utf8").digest("hex");
    this.pending.set(sha256, content);
    let outcome: ArtifactWriteOutcome;
    try {
      outcome = await this.writeArtifact({ artifact, sha256 });
    } finally {
      this.pending.delete(sha256);
    }
    if (!this.written.includes(artifact)) this.written.push(artifact);
    if (outcome.versioned !== null) this.versioned.push(outcome.versioned);
    this.lastDigest.set(artifact, sha256);
  }

  private writeNow(artifact: string, sha256: string): ArtifactWriteOutcome {
    const content = this.pending.get(sha256);
    if (content === undefined) throw new InternalError(`write_artifact(${artifact}) ran without its content`);
    const before = this.files.versioned.length;
    this.files.write(artifact, content);
    return {
      artifact,
      sha256,
      versioned: this.files.versioned[before] ?? this.versionOfStoppedWrite(artifact, sha256),
    };
  }

  /**
   * The content was already in place although this run last wrote something
   * else there: this write was stopped after replacing the file (before its
   * node finished), and the version it made then holds what this run wrote
   * before. Without it, the resumed run's result would miss that version.
   */
  private versionOfStoppedWrite(artifact: string, sha256: string): string | null {
    const previous = this.lastDigest.get(artifact);
    if (previous === undefined || previous === sha256) return null;
    return this.files.latestVersionHolding(artifact, previous);
  }
}

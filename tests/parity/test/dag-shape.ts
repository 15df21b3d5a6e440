// Entry-independent views of what a run recorded, for comparing entries.
import type { SessionNode } from "@openprogram/session-context";

/** A node with everything that legitimately differs between runs (ids, times, durations) taken out. */
export interface NodeShape {
  seq: number;
  role: string;
  name: string;
  /** seq of the calling node, or null at top level. */
  caller: number | null;
  /** seq of the predecessor, "ROOT", or null. */
  predecessor: number | "ROOT" | null;
  status: unknown;
  doc: unknown;
  expose: unknown;
  input: unknown;
  output: unknown;
  error: unknown;
  choices: unknown;
  reads: number[];
  promptSha256: unknown;
  system: unknown;
  promptText: unknown;
}

/** The DAG of a session as shapes, in seq order. */
export function dagShape(nodes: readonly SessionNode[]): NodeShape[] {
  const seqOf = new Map(nodes.map((node) => [node.id, node.seq]));
  const ref = (id: string | null): number | null => (id === null || id === "" ? null : (seqOf.get(id) ?? -1));
  return nodes.map((node) => ({
    seq: node.seq,
    role: node.role,
    name: node.name,
    caller: ref(node.caller),
    predecessor: node.predecessor === "ROOT" ? "ROOT" : ref(node.predecessor),
    status: node.metadata.status,
    doc: node.metadata.doc,
    expose: node.metadata.expose,
    input: node.input,
    output: node.output,
    error: node.metadata.error ?? null,
    choices: node.metadata.choices ?? null,
    reads: node.reads.map((id) => seqOf.get(id) ?? -1),
    promptSha256: node.metadata.prompt_sha256 ?? null,
    system: node.metadata.system ?? null,
    promptText: node.metadata.prompt_text ?? null,
  }));
}

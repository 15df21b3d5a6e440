import type { SessionNode } from "@openprogram/session-context";

/** A node with ids replaced by stable labels (`name#n`), so two sessions' trees compare with toEqual. */
export interface NormalisedNode {
  seq: number;
  role: string;
  name: string;
  caller: string;
  predecessor: string | null;
  reads: string[];
  input: unknown;
  output: unknown;
  status: unknown;
  promptSha256: unknown;
}

/** Labels every node `name#<occurrence>` and rewrites references with the labels. */
export function normaliseNodes(nodes: readonly SessionNode[]): NormalisedNode[] {
  const labels = new Map<string, string>();
  const counts = new Map<string, number>();
  for (const node of nodes) {
    const count = (counts.get(node.name) ?? 0) + 1;
    counts.set(node.name, count);
    labels.set(node.id, `${node.name}#${count}`);
  }
  const label = (id: string | null): string | null =>
    id === null || id === "" || id === "ROOT" ? id : (labels.get(id) ?? `unknown:${id}`);
  return nodes.map((node) => ({
    seq: node.seq,
    role: node.role,
    name: node.name,
    caller: label(node.caller) ?? "",
    predecessor: label(node.predecessor),
    reads: node.reads.map((id) => label(id) ?? ""),
    input: node.input,
    output: node.output,
    status: node.metadata.status,
    promptSha256: node.metadata.prompt_sha256,
  }));
}

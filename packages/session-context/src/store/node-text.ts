import type { NodeRole, SessionNode } from "./types.js";

const ROLES: ReadonlySet<string> = new Set<NodeRole>(["user", "llm", "code"]);

/**
 * Parses a node file's text (the one parser of node files: the store, the
 * commit check and the doctor use it); returns why it is not a node instead
 * of throwing, so one bad file cannot hide the rest.
 */
export function parseNodeText(raw: string, seqFromName: number): SessionNode | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return `not valid JSON (${(error as Error).message})`;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "not a JSON object";
  const node = value as Partial<SessionNode>;
  if (typeof node.id !== "string" || node.id === "") return 'missing "id"';
  if (typeof node.role !== "string" || !ROLES.has(node.role)) return `unknown role ${JSON.stringify(node.role)}`;
  return {
    ...node,
    id: node.id,
    created_at: typeof node.created_at === "number" ? node.created_at : 0,
    seq: typeof node.seq === "number" && Number.isInteger(node.seq) ? node.seq : seqFromName,
    role: node.role,
    name: typeof node.name === "string" ? node.name : "",
    input: node.input ?? null,
    output: node.output ?? null,
    caller: typeof node.caller === "string" ? node.caller : "",
    predecessor: node.predecessor ?? null,
    reads: Array.isArray(node.reads) ? node.reads : [],
    metadata: node.metadata && typeof node.metadata === "object" ? node.metadata : {},
  };
}

import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { isValidSessionId } from "../ids.js";
import { dumpsPython } from "../json/python-json.js";
import { statusAfterAbandon, statusWhenIdle } from "./abandoned-turn.js";
import { writeFileAtomic } from "./atomic-file.js";
import { commitAll, committedText, uncommittedPaths } from "./git-repo.js";
import { nowSeconds } from "./history.js";
import { INDEX_FILE, nodeFileName, parseNodeFileName, type SessionPaths } from "./layout.js";
import { registryEntryFromMeta } from "./registry.js";
import type { SessionDB } from "./session-db.js";
import { liveTurnLeases } from "./turn-lease.js";
import type { NodeRole, SessionMeta, SessionNode, SessionRecord } from "./types.js";

/** What the doctor can find. */
export type FindingKind =
  | "registry_corrupt"
  | "registry_missing_entry"
  | "registry_orphan_entry"
  | "registry_mismatch"
  | "missing_meta"
  | "corrupt_meta"
  | "corrupt_node"
  | "temp_leftover"
  | "duplicate_seq"
  | "seq_mismatch"
  | "seq_gap"
  | "dangling_head"
  | "missing_head"
  | "unfinished_node"
  | "stuck_status"
  | "uncommitted_tail";

/** One problem, and what was done about it. */
export interface DoctorFinding {
  sessionId: string | null;
  kind: FindingKind;
  severity: "error" | "warning";
  message: string;
  path?: string;
  /** True when --fix repaired it. */
  fixed: boolean;
  /** What the repair did, or how to repair it by hand when it cannot be done safely. */
  remedy: string;
}

/** The doctor's verdict on a store. */
export interface DoctorReport {
  root: string;
  sessionsChecked: number;
  findings: DoctorFinding[];
  /** True when no error-severity finding is left unrepaired. */
  healthy: boolean;
}

const ROLE_BY_LETTER: Record<string, NodeRole> = { u: "user", l: "llm", c: "code" };
const TEMP_FILE = /^\..*\.tmp-[0-9a-f]+$/;
/** A temp file this old cannot belong to a write in progress. */
const TEMP_AGE_MS = 60_000;

/**
 * Checks a store (or one session) for everything a crash, a full disk, a
 * foreign tool or a hand edit can leave behind, and with `fix` repairs what it
 * can without losing data, reporting every change. Sessions with a live turn
 * are checked but never repaired.
 */
export async function doctorStore(
  db: SessionDB,
  options: { sessionId?: string; fix?: boolean } = {},
): Promise<DoctorReport> {
  const fix = options.fix === true;
  const findings: DoctorFinding[] = [];
  if (!existsSync(db.root)) return { root: db.root, sessionsChecked: 0, findings, healthy: true };
  const directories = options.sessionId !== undefined ? [options.sessionId] : sessionDirectories(db.root);
  if (options.sessionId === undefined) await checkRegistryFile(db, findings, fix);
  for (const sessionId of directories) await checkSession(db, sessionId, findings, fix);
  await checkRegistryEntries(db, options.sessionId, findings, fix);
  return {
    root: db.root,
    sessionsChecked: directories.length,
    findings,
    healthy: !findings.some((finding) => finding.severity === "error" && !finding.fixed),
  };
}

function sessionDirectories(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && isValidSessionId(entry.name))
    .map((entry) => entry.name)
    .sort();
}

async function checkRegistryFile(db: SessionDB, findings: DoctorFinding[], fix: boolean): Promise<void> {
  const path = join(db.root, INDEX_FILE);
  let problem: string | null = null;
  if (!existsSync(path)) problem = "is missing";
  else {
    try {
      const value: unknown = JSON.parse(readFileSync(path, "utf8"));
      if (value === null || typeof value !== "object" || Array.isArray(value)) problem = "is not a JSON object";
    } catch {
      problem = "is not valid JSON";
    }
  }
  if (!problem) return;
  const finding: DoctorFinding = {
    sessionId: null,
    kind: "registry_corrupt",
    severity: "error",
    message: `The registry ${problem}.`,
    path,
    fixed: false,
    remedy: "Rebuild it from the sessions' meta.json files (run with --fix).",
  };
  if (fix) {
    await db.updateRegistry(() => undefined);
    finding.fixed = true;
    finding.remedy =
      "Rebuilt from the sessions' meta.json files (a corrupt file was kept as index.json.corrupt-<time>).";
  }
  findings.push(finding);
}

async function checkRegistryEntries(
  db: SessionDB,
  only: string | undefined,
  findings: DoctorFinding[],
  fix: boolean,
): Promise<void> {
  let entries: Record<string, SessionRecord>;
  try {
    entries = JSON.parse(readFileSync(join(db.root, INDEX_FILE), "utf8")) as Record<string, SessionRecord>;
  } catch {
    return;
  }
  const onDisk = new Set(only !== undefined ? [only] : sessionDirectories(db.root));
  const changes: Array<(all: Record<string, SessionRecord>) => void> = [];
  for (const sessionId of onDisk) {
    const meta = readMeta(db.paths(sessionId));
    if (!meta) continue;
    const entry = entries[sessionId];
    if (!entry) {
      findings.push({
        sessionId,
        kind: "registry_missing_entry",
        severity: "error",
        message: `Session '${sessionId}' is on disk but not in the registry.`,
        fixed: fix,
        remedy: fix ? "Added it from meta.json." : "Add it from meta.json (run with --fix).",
      });
      changes.push((all) => {
        all[sessionId] = registryEntryFromMeta(meta);
      });
      continue;
    }
    const differing = (["title", "agent_id", "source"] as const).filter(
      (field) => meta[field] !== undefined && entry[field] !== meta[field],
    );
    if (differing.length > 0) {
      findings.push({
        sessionId,
        kind: "registry_mismatch",
        severity: "warning",
        message: `The registry's ${differing.join(", ")} differ from meta.json.`,
        fixed: fix,
        remedy: fix ? "Copied them from meta.json." : "Copy them from meta.json (run with --fix).",
      });
      changes.push((all) => {
        const current = all[sessionId];
        if (current) for (const field of differing) current[field] = meta[field];
      });
    }
  }
  if (only === undefined) {
    for (const sessionId of Object.keys(entries)) {
      if (existsSync(join(db.root, sessionId, "meta.json")) || existsSync(join(db.root, sessionId, "history")))
        continue;
      findings.push({
        sessionId,
        kind: "registry_orphan_entry",
        severity: "warning",
        message: `The registry lists '${sessionId}', which is not on disk.`,
        fixed: fix,
        remedy: fix ? "Removed the entry." : "Remove the entry (run with --fix).",
      });
      changes.push((all) => {
        delete all[sessionId];
      });
    }
  }
  if (fix && changes.length > 0) {
    await db.updateRegistry((all) => {
      for (const change of changes) change(all);
    });
  }
}

async function checkSession(db: SessionDB, sessionId: string, findings: DoctorFinding[], fix: boolean): Promise<void> {
  const paths = db.paths(sessionId);
  if (!existsSync(paths.dir)) return;
  const live = liveTurnLeases(paths).length > 0;
  const canFix = fix && !live;
  const add = (finding: Omit<DoctorFinding, "sessionId" | "fixed"> & { fixed?: boolean }): DoctorFinding => {
    const full: DoctorFinding = { sessionId, fixed: false, ...finding };
    if (live && fix && !full.fixed) full.remedy = `${full.remedy} (not repaired: a turn is running in this session)`;
    findings.push(full);
    return full;
  };

  const files = existsSync(paths.history) ? readdirSync(paths.history) : [];
  // Every node file's seq counts as taken, readable or not.
  const takenSeqs = files.map((file) => parseNodeFileName(file)?.seq).filter((seq): seq is number => seq !== undefined);
  const nodes: Array<{ file: string; node: SessionNode }> = [];
  for (const file of files) {
    const path = join(paths.history, file);
    if (TEMP_FILE.test(file)) {
      if (Date.now() - statSync(path).mtimeMs < TEMP_AGE_MS) continue;
      const finding = add({
        kind: "temp_leftover",
        severity: "warning",
        message: `A temp file from an interrupted write is left in history/.`,
        path,
        remedy: "Delete it: the write it belonged to never completed (run with --fix).",
      });
      if (canFix) {
        rmSync(path, { force: true });
        finding.fixed = true;
        finding.remedy = "Deleted it.";
      }
      continue;
    }
    const parsedName = parseNodeFileName(file);
    if (!parsedName) continue;
    const node = parseNode(readFileSync(path, "utf8"));
    if (node) {
      nodes.push({ file, node });
      continue;
    }
    const finding = add({
      kind: "corrupt_node",
      severity: "error",
      message: "A node file is not valid node JSON.",
      path,
      remedy: `Restore it by hand (e.g. git -C ${paths.dir} show HEAD:history/${file}) or move it out of history/.`,
    });
    if (canFix) {
      const committed = await committedText(paths, `history/${file}`);
      const restored = committed === null ? null : parseNode(committed);
      if (committed !== null && restored) {
        await db.withSessionLock(sessionId, () => writeFileAtomic(path, committed));
        nodes.push({ file, node: restored });
        finding.fixed = true;
        finding.remedy = "Restored the last committed version from git.";
      } else {
        finding.remedy = `No committed version to restore; ${finding.remedy}`;
      }
    }
  }

  let meta = readMeta(paths);
  if (!meta) {
    const missing = !existsSync(paths.meta);
    const finding = add({
      kind: missing ? "missing_meta" : "corrupt_meta",
      severity: "error",
      message: `meta.json ${missing ? "is missing" : "is not valid JSON"}.`,
      path: paths.meta,
      remedy: "Rebuild it from the history and the registry (run with --fix).",
    });
    if (canFix) {
      meta = rebuildMeta(
        db,
        sessionId,
        nodes.map((entry) => entry.node),
      );
      const rebuilt = meta;
      await db.withSessionLock(sessionId, async () => {
        if (!missing) renameSync(paths.meta, `${paths.meta}.corrupt-${Date.now()}`);
        await writeFileAtomic(paths.meta, dumpsPython(rebuilt));
      });
      finding.fixed = true;
      finding.remedy = `Rebuilt it (head ${meta.head_id ?? "none"})${missing ? "" : "; the corrupt file was kept as meta.json.corrupt-<time>"}.`;
    }
  }

  await checkSeqs(db, sessionId, paths, nodes, takenSeqs, add, canFix);

  if (meta) {
    const byId = new Map(nodes.map((entry) => [entry.node.id, entry.node]));
    const head = meta.head_id ?? null;
    const expected = computeHead(nodes.map((entry) => entry.node));
    if (head !== null && !byId.has(head)) {
      const finding = add({
        kind: "dangling_head",
        severity: "error",
        message: `head_id '${head}' names no node of the session.`,
        path: paths.meta,
        remedy: "Point it at the last node of the conversation branch (run with --fix).",
      });
      if (canFix) await repairHead(db, sessionId, paths, expected, finding);
    } else if (head === null && expected !== null) {
      const finding = add({
        kind: "missing_head",
        severity: "warning",
        message: "The session has conversation nodes but no head_id.",
        path: paths.meta,
        remedy: "Point it at the last node of the conversation branch (run with --fix).",
      });
      if (canFix) await repairHead(db, sessionId, paths, expected, finding);
    }
  }

  if (!live) {
    // A waiting question is not damage: it outlives its process and answering it resumes the turn.
    const unfinished = nodes.filter((entry) => statusAfterAbandon(entry.node) !== null);
    for (const { file, node } of unfinished) {
      const finding = add({
        kind: "unfinished_node",
        severity: "warning",
        message: `Node ${node.id} (${node.name || node.role}) is still '${String(node.metadata.status)}' but no turn is running.`,
        path: join(paths.history, file),
        remedy: "Record it as interrupted (run with --fix).",
      });
      if (canFix) {
        db.invalidate(sessionId);
        await db.updateNode(sessionId, node.id, { metadata: { status: "interrupted", interrupted_at: nowSeconds() } });
        finding.fixed = true;
        finding.remedy = "Recorded it as interrupted.";
      }
    }
    const entry = readRegistryEntry(db, sessionId);
    const idleStatus = statusWhenIdle(
      nodes.map((item) => item.node),
      "idle",
    );
    if (entry && (entry.status === "running" || entry.status === "needs_input") && entry.status !== idleStatus) {
      const finding = add({
        kind: "stuck_status",
        severity: "warning",
        message: `The session's status is '${entry.status}' but no turn is running.`,
        remedy: `Set it to ${idleStatus} (run with --fix).`,
      });
      if (canFix) {
        await db.setStatus(sessionId, idleStatus);
        finding.fixed = true;
        finding.remedy = `Set it to ${idleStatus}.`;
      }
    }
    const pending = existsSync(paths.git)
      ? await uncommittedPaths(paths)
      : nodes.length > 0
        ? nodes.map((entry) => `history/${entry.file}`)
        : [];
    if (pending.length > 0) {
      const finding = add({
        kind: "uncommitted_tail",
        severity: "warning",
        message: `${pending.length} change(s) were never committed (${pending.slice(0, 3).join(", ")}${pending.length > 3 ? ", ..." : ""}).`,
        remedy: "Commit them as a recovery commit (run with --fix).",
      });
      if (canFix && existsSync(paths.meta)) {
        const sha = await commitAll(paths, "doctor: commit uncommitted tail");
        finding.fixed = true;
        finding.remedy = `Committed them${sha ? ` (${sha.slice(0, 12)})` : ""}.`;
      }
    }
  }
  db.invalidate(sessionId);
}

type AddFinding = (finding: Omit<DoctorFinding, "sessionId" | "fixed"> & { fixed?: boolean }) => DoctorFinding;

async function checkSeqs(
  db: SessionDB,
  sessionId: string,
  paths: SessionPaths,
  nodes: Array<{ file: string; node: SessionNode }>,
  takenSeqs: number[],
  add: AddFinding,
  canFix: boolean,
): Promise<void> {
  const bySeq = new Map<number, Array<{ file: string; node: SessionNode }>>();
  for (const entry of nodes) {
    const fileSeq = parseNodeFileName(entry.file)?.seq as number;
    if (entry.node.seq !== fileSeq) {
      const finding = add({
        kind: "seq_mismatch",
        severity: "warning",
        message: `Node ${entry.node.id} says seq ${entry.node.seq} but its file name says ${fileSeq}.`,
        path: join(paths.history, entry.file),
        remedy: "Make the node's seq match its file name (run with --fix).",
      });
      if (canFix) {
        entry.node = { ...entry.node, seq: fileSeq };
        const text = dumpsPython(entry.node);
        await db.withSessionLock(sessionId, () => writeFileAtomic(join(paths.history, entry.file), text));
        finding.fixed = true;
        finding.remedy = "Rewrote the node with its file name's seq.";
      }
    }
    const list = bySeq.get(fileSeq) ?? [];
    list.push(entry);
    bySeq.set(fileSeq, list);
  }
  let next = Math.max(-1, ...takenSeqs) + 1;
  for (const [seq, entries] of [...bySeq].sort((a, b) => a[0] - b[0])) {
    if (entries.length < 2) continue;
    // The earliest written keeps the seq; the others move to fresh seqs at the end (ids, and so every reference, stay).
    const [, ...later] = [...entries].sort((a, b) => a.node.created_at - b.node.created_at);
    for (const entry of later) {
      const finding = add({
        kind: "duplicate_seq",
        severity: "error",
        message: `seq ${seq} is used by more than one node (${entries.map((candidate) => candidate.node.id).join(", ")}).`,
        path: join(paths.history, entry.file),
        remedy: "Move the later node to a fresh seq at the end (run with --fix).",
      });
      if (canFix) {
        const moved: SessionNode = { ...entry.node, seq: next };
        const role = ROLE_BY_LETTER[entry.file.split("-")[1] ?? ""] ?? moved.role;
        const target = nodeFileName(next, role, moved.id);
        const from = entry.file;
        await db.withSessionLock(sessionId, async () => {
          await writeFileAtomic(join(paths.history, target), dumpsPython(moved));
          rmSync(join(paths.history, from));
        });
        entry.node = moved;
        entry.file = target;
        finding.fixed = true;
        finding.remedy = `Moved node ${moved.id} to seq ${next} (${target}).`;
        next++;
      }
    }
  }
  const seqs = [...new Set(takenSeqs)].sort((a, b) => a - b);
  const gaps: number[] = [];
  for (let index = 1; index < seqs.length; index++) {
    for (let missing = (seqs[index - 1] as number) + 1; missing < (seqs[index] as number); missing++)
      gaps.push(missing);
  }
  if (seqs.length > 0 && (seqs[0] as number) > 0)
    for (let missing = 0; missing < (seqs[0] as number); missing++) gaps.unshift(missing);
  if (gaps.length > 0) {
    add({
      kind: "seq_gap",
      severity: "warning",
      message: `No node has seq ${gaps.slice(0, 10).join(", ")}${gaps.length > 10 ? ", ..." : ""} (left by a write that never completed).`,
      remedy: "Nothing to do: gaps are harmless and seqs are never reused.",
    });
  }
}

async function repairHead(
  db: SessionDB,
  sessionId: string,
  paths: SessionPaths,
  head: string | null,
  finding: DoctorFinding,
): Promise<void> {
  await db.withSessionLock(sessionId, async () => {
    const meta = readMeta(paths);
    if (meta) await writeFileAtomic(paths.meta, dumpsPython({ ...meta, head_id: head }));
  });
  finding.fixed = true;
  finding.remedy = `Set head_id to ${head ?? "null"}.`;
}

/** The last top-level conversation node, following predecessor links from the newest. */
function computeHead(nodes: SessionNode[]): string | null {
  const conversation = nodes.filter(
    (node) =>
      node.caller === "" && !(node.role === "user" && node.name === "ask_user") && node.metadata.status !== "failed",
  );
  if (conversation.length === 0) return null;
  const referenced = new Set(conversation.map((node) => node.predecessor));
  // Ties (possible after duplicate seqs) go to the newest node, then the id, so the answer never depends on readdir order.
  const tips = conversation
    .filter((node) => !referenced.has(node.id))
    .sort((a, b) => b.seq - a.seq || b.created_at - a.created_at || a.id.localeCompare(b.id));
  return (tips[0] ?? conversation[conversation.length - 1])?.id ?? null;
}

function rebuildMeta(db: SessionDB, sessionId: string, nodes: SessionNode[]): SessionMeta {
  const entry = readRegistryEntry(db, sessionId);
  const times = nodes.map((node) => node.created_at).filter((time) => time > 0);
  const created = entry?.created_at ?? (times.length > 0 ? Math.min(...times) : nowSeconds());
  return {
    id: sessionId,
    agent_id: entry?.agent_id ?? "main",
    title: entry?.title ?? "",
    source: entry?.source ?? "",
    created_at: created,
    updated_at: entry?.updated_at ?? (times.length > 0 ? Math.max(...times) : created),
    project_id: "default",
    head_id: computeHead(nodes),
  };
}

function readMeta(paths: SessionPaths): SessionMeta | null {
  try {
    const value = JSON.parse(readFileSync(paths.meta, "utf8")) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as SessionMeta) : null;
  } catch {
    return null;
  }
}

function readRegistryEntry(db: SessionDB, sessionId: string): SessionRecord | undefined {
  try {
    return (JSON.parse(readFileSync(join(db.root, INDEX_FILE), "utf8")) as Record<string, SessionRecord>)[sessionId];
  } catch {
    return undefined;
  }
}

function parseNode(text: string): SessionNode | null {
  try {
    const value = JSON.parse(text) as Partial<SessionNode> | null;
    if (!value || typeof value !== "object" || typeof value.id !== "string" || typeof value.role !== "string")
      return null;
    return value as SessionNode;
  } catch {
    return null;
  }
}

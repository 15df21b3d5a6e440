import { existsSync, renameSync } from "node:fs";
import { dumpsPython } from "../../json/python-json.js";
import { writeFileAtomic } from "../atomic-file.js";
import { nowSeconds } from "../../time/now-seconds.js";
import { readMetaFile } from "../meta-file.js";
import { readRegistryFile } from "../registry.js";
import type { SessionMeta, SessionNode } from "../types.js";
import { computeHead } from "./head.js";
import type { SessionScan } from "./types.js";
import { storeInternals } from "../internal.js";

/**
 * `missing_meta` and `corrupt_meta` (not JSON, or not a JSON object). --fix
 * rebuilds meta.json from the history and the registry, keeps a corrupt file
 * beside it, and takes a "damaged" status off the registry entry.
 */
export async function checkMeta(scan: SessionScan): Promise<void> {
  const { paths } = scan;
  const reading = readMetaFile(paths.meta);
  if (reading.state === "ok") {
    scan.meta = reading.meta;
    return;
  }
  const missing = reading.state === "missing";
  const finding = scan.add({
    kind: missing ? "missing_meta" : "corrupt_meta",
    severity: "error",
    message: `meta.json ${missing ? "is missing" : reading.reason}.`,
    path: paths.meta,
    remedy: "Rebuild it from the history and the registry (run with --fix).",
  });
  if (!scan.canFix) return;
  const rebuilt = rebuildMeta(
    scan,
    scan.nodes.map((entry) => entry.node),
  );
  await storeInternals(scan.db).withSessionLock(scan.sessionId, async () => {
    if (existsSync(paths.meta)) renameSync(paths.meta, `${paths.meta}.corrupt-${Date.now()}`);
    await writeFileAtomic(paths.meta, dumpsPython(rebuilt));
  });
  await storeInternals(scan.db).updateRegistry((entries) => {
    const entry = entries[scan.sessionId];
    if (entry?.status === "damaged") entries[scan.sessionId] = { ...entry, status: "idle" };
  });
  scan.meta = rebuilt;
  finding.fixed = true;
  finding.remedy = `Rebuilt it (head ${rebuilt.head_id ?? "none"})${missing ? "" : "; the corrupt file was kept as meta.json.corrupt-<time>"}.`;
}

function rebuildMeta(scan: SessionScan, nodes: SessionNode[]): SessionMeta {
  const registry = readRegistryFile(scan.db.root);
  const listed = registry.state === "ok" ? registry.entries[scan.sessionId] : undefined;
  // A "damaged" entry was made without meta.json: its times are the directory's, not the session's.
  const entry = listed?.status === "damaged" ? undefined : listed;
  const times = nodes.map((node) => node.created_at).filter((time) => time > 0);
  const created = entry?.created_at ?? (times.length > 0 ? Math.min(...times) : nowSeconds());
  return {
    id: scan.sessionId,
    agent_id: entry?.agent_id ?? "main",
    title: entry?.title ?? "",
    source: entry?.source ?? "",
    created_at: created,
    updated_at: entry?.updated_at ?? (times.length > 0 ? Math.max(...times) : created),
    project_id: "default",
    head_id: computeHead(nodes),
  };
}

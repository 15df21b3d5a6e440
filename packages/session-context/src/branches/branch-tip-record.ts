import type { BranchTip } from "./branch-tips.js";

/** A branch tip in the snake_case wire form every entry shows it in (a web frame, `sessions branches --json`). */
export interface BranchTipRecord {
  head_id: string;
  name: string | null;
  created_at: number | null;
  updated_at: number | null;
  archived: boolean;
  active: boolean;
  trunk: boolean;
}

export function branchTipRecord(tip: BranchTip): BranchTipRecord {
  return {
    head_id: tip.headId,
    name: tip.name,
    created_at: tip.createdAt,
    updated_at: tip.updatedAt,
    archived: tip.archived,
    active: tip.active,
    trunk: tip.trunk,
  };
}

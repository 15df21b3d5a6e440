import { costOf, priceFor, type PriceTable } from "./price-table.js";
import { addCounts, emptyCounts, type UsageCounts } from "./usage-counts.js";

/** Token counts with their cost: null when any model in them has no price (`unpricedModels` says which). */
export interface PricedUsage extends UsageCounts {
  /** US dollars at the configured prices; null when a model in these counts has no price. */
  cost: number | null;
  /** Models in these counts with no price in the table, sorted. */
  unpricedModels: string[];
}

/** Adds per-model counts up and prices them. A model with no calls needs no price. */
export function priceUsage(byModel: ReadonlyMap<string, UsageCounts>, table: PriceTable): PricedUsage {
  const total = emptyCounts();
  let cost = 0;
  const unpricedModels: string[] = [];
  for (const [model, counts] of byModel) {
    addCounts(total, counts);
    if (counts.inputTokens === 0 && counts.outputTokens === 0) continue; // nothing to pay for
    const found = priceFor(table, model);
    if ("price" in found) cost += costOf(counts, found.price);
    else unpricedModels.push(model);
  }
  unpricedModels.sort();
  return { ...total, cost: unpricedModels.length > 0 ? null : cost, unpricedModels };
}

/** Why each model named has no cost, one line each (for the notes under a usage table). */
export function unpricedReasons(models: Iterable<string>, table: PriceTable): string[] {
  const reasons: string[] = [];
  for (const model of new Set(models)) {
    const found = priceFor(table, model);
    if ("missing" in found) reasons.push(`${model}: no cost shown, ${found.missing}`);
  }
  return reasons.sort();
}

/** Adds counts into a per-model map. */
export function addToModel(byModel: Map<string, UsageCounts>, model: string, counts: UsageCounts): void {
  let into = byModel.get(model);
  if (!into) byModel.set(model, (into = emptyCounts()));
  addCounts(into, counts);
}

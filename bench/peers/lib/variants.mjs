// Every peer's variants, in the order rounds alternate them.
import { bareVariants } from "../peers/bare.mjs";
import { langGraphVariants } from "../peers/langgraph.mjs";
import { layoutFloorVariants } from "../peers/layout-floor.mjs";
import { mastraVariants } from "../peers/mastra.mjs";
import { oursVariants } from "../peers/ours.mjs";

/** All variants; `only` (ids or id prefixes) narrows them. An opt-in variant (a bound) is chosen by its whole id only. */
export function selectVariants(only) {
  const all = [
    ...oursVariants(),
    ...bareVariants(),
    ...layoutFloorVariants(),
    ...langGraphVariants(),
    ...mastraVariants(),
  ];
  if (!only || only.length === 0) return all.filter((variant) => !variant.optIn);
  const chosen = all.filter((variant) =>
    only.some((name) => variant.id === name || (!variant.optIn && variant.id.startsWith(name))),
  );
  if (chosen.length === 0)
    throw new Error(`no variant matches ${only.join(", ")}; known: ${all.map((v) => v.id).join(", ")}`);
  return chosen;
}

/** One variant by id. */
export function variantById(id) {
  const variant = selectVariants([id]).find((candidate) => candidate.id === id);
  if (!variant) throw new Error(`unknown variant ${id}`);
  return variant;
}

import { agenticFunction } from "@openprogram/session-context";

export const explode = agenticFunction({ name: "explode", doc: "Always fails." }, async ({ reason }) => {
  throw new RangeError(`cannot do that: ${reason ?? "no reason"}`);
});

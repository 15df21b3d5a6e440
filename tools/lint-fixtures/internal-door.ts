// Deliberately goes through the store's internal door from outside the core; linted by
// packages/session-context/test/lint-boundary.test.ts.
import { storeInternals } from "../../packages/session-context/src/store/internal.js";
import type { StoreInternals } from "@openprogram/session-context/dist/store/internal.js";
import { registerStoreInternals } from "@openprogram/session-context/dist/store/store-internals.js";

export const doors: unknown[] = [storeInternals, registerStoreInternals];
export type Door = StoreInternals;

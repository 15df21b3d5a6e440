// The one module that owns the AsyncLocalStorage (the lint rule keeps it so).
import { AsyncLocalStorage } from "node:async_hooks";
import { ContextVersionMismatchError } from "../errors.js";
import { CONTEXT_PROTOCOL, type ActiveContext } from "./types.js";

interface ContextSlot {
  protocol: number;
  version: string;
  storage: AsyncLocalStorage<ActiveContext>;
}

/** This package's version, recorded in the slot so a mismatch can say which copies clash. */
export const PACKAGE_VERSION = "0.1.0";

const SLOT_KEY = Symbol.for("openprogram.session-context");

/**
 * A user program loaded by the CLI or the dispatcher may bring its own copy of
 * this package. Every copy must see the context the entry installed, so the
 * AsyncLocalStorage lives in one process-wide slot shared by all copies; a copy
 * that cannot read this slot's contexts fails loudly instead of splitting them.
 */
function claimSlot(): ContextSlot {
  const holder = globalThis as unknown as Record<symbol, ContextSlot | undefined>;
  const existing = holder[SLOT_KEY];
  if (existing) {
    if (existing.protocol !== CONTEXT_PROTOCOL) {
      throw new ContextVersionMismatchError(
        `Two incompatible copies of @openprogram/session-context are loaded in this process ` +
          `(context protocol ${existing.protocol} from version ${existing.version}, and protocol ` +
          `${CONTEXT_PROTOCOL} from version ${PACKAGE_VERSION}). Install one version, e.g. dedupe ` +
          "your node_modules so the program and the entry share it.",
      );
    }
    return existing;
  }
  const slot: ContextSlot = {
    protocol: CONTEXT_PROTOCOL,
    version: PACKAGE_VERSION,
    storage: new AsyncLocalStorage<ActiveContext>(),
  };
  Object.defineProperty(holder, SLOT_KEY, { value: slot, enumerable: false, configurable: false, writable: false });
  return slot;
}

const slot = claimSlot();

/** The installed context, or undefined. */
export function activeContext(): ActiveContext | undefined {
  return slot.storage.getStore();
}

/** Runs `fn` with `context` installed; the previous context is restored when it settles or throws. */
export function runWithContext<T>(context: ActiveContext, fn: () => T): T {
  return slot.storage.run(context, fn);
}

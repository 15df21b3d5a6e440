import { resolve } from "node:path";
import { defaultSessionsRoot } from "./default-root.js";
import { SessionDB } from "./session-db.js";

const stores = new Map<string, SessionDB>();

/**
 * The store at `root` (default `$OPENPROGRAM_HOME/sessions`). One instance per
 * root per process, so every entry shares its caches. The public way for
 * adapters to get a store.
 */
export function openStore(options: { root?: string } = {}): SessionDB {
  const root = resolve(options.root ?? defaultSessionsRoot());
  let store = stores.get(root);
  if (!store) {
    store = new SessionDB({ root });
    stores.set(root, store);
  }
  return store;
}

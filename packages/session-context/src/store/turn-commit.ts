import { commitAll, readLog } from "./git-repo.js";
import type { StoreState } from "./store-state.js";
import type { GitLogEntry } from "./types.js";
import { checkpointWalIfLarge } from "./wal-recovery.js";

/** A turn's git commit, and the history of those commits. See SessionDB for each method. */
export class TurnCommit {
  constructor(private readonly state: StoreState) {}

  /**
   * Under the session lock, which the turn's last write has usually just held and still leases (a lock of its own
   * cost a lock file made and removed at every turn).
   */
  async commitTurn(sessionId: string, message: string): Promise<string | null> {
    const { state } = this;
    const paths = state.requirePaths(sessionId);
    return state.withSessionLock(sessionId, async () => {
      // The commit reads the files: a node held in the log only (a tool's running node) goes in place first.
      await state.history.placeHeld(paths);
      const changed = state.history.changedSinceCommit(paths);
      const sha = await commitAll(paths, message, changed);
      state.history.committed(paths);
      // A log grown long is emptied once what it names is durable: through this commit when it holds all of it.
      await checkpointWalIfLarge(paths, true);
      return sha;
    });
  }

  async gitLog(sessionId: string, maxCount: number): Promise<GitLogEntry[]> {
    return readLog(this.state.requirePaths(sessionId), maxCount);
  }
}

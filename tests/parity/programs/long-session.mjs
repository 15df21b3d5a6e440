// Compaction and branches from inside a program, run unchanged in-process and in a child
// process (tests/parity/test/long-session-child.test.ts): both must leave the same files
// and the session's next prompt must be the same.
import { agenticFunction, currentSession } from "@openprogram/session-context";
import { compactSession } from "@openprogram/session-context/compaction";
import { checkoutHead, listBranches, nameBranch } from "@openprogram/session-context/store";

/** Compacts the session this call runs in, keeping `keep` tokens of recent conversation verbatim. */
export const compactHere = agenticFunction(
  { name: "compact_here", doc: "Compact the current session's conversation." },
  async ({ keep }) => {
    const result = await compactSession(currentSession().sessionId, { keepRecentTokens: keep });
    return { covered: result.covered, kept: result.kept, summary: result.summaryId !== null };
  },
);

/**
 * Renames the branch at `tip`, tries to move the head to `other` (refused while
 * a turn runs, wherever it runs), then asks the model on the head's branch.
 */
export const continueBranch = agenticFunction(
  { name: "continue_branch", doc: "Name the current branch and continue it." },
  async ({ tip, name, other }, { runtime }) => {
    const { sessionId } = currentSession();
    const named = await nameBranch(sessionId, tip, name);
    const refused = await checkoutHead(sessionId, other).then(
      () => null,
      (error) => error.code,
    );
    const reply = await runtime.exec(`Continue the branch named ${name}.`);
    const tips = (await listBranches(sessionId)).map((branch) => [branch.headId === tip, branch.name]);
    return { named: named.headId, refused, reply, tips };
  },
);

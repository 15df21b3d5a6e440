import type { CompactionReason } from "../context/events.js";
import type { ChatMessage, ModelProvider, ModelRequest, ReportedUsage } from "../providers/types.js";
import type { CompactionPort, WindowedPrompt } from "../runtime/compaction-port.js";
import { storeInternals } from "../store/internal.js";
import { compactInContext, type CompactionResult } from "./compact-in-context.js";
import type { CompactionScope } from "./compaction-scope.js";
import { resolveCompactionSettings, type CompactionSettings } from "./compaction-settings.js";
import { contextLimitFrom, isContextOverflowError } from "./context-overflow.js";
import { PersistedTokenCounts } from "./persisted-token-counts.js";
import { countChatTokensIfLoaded, countChatTokensPersisted, tokenUpperBound } from "./token-count.js";
import { reportedPrefix } from "./usage-estimate.js";

/** What a runtime's compaction policy is made with. */
export interface ContextWindowPolicyOptions {
  /** The model that writes summaries (the runtime's). */
  provider: ModelProvider;
  model: string;
  /** The window, how much to keep verbatim, whether to compact by itself. */
  settings?: CompactionSettings | undefined;
  /** The runtime's temperature, used for summaries too. */
  temperature?: number | undefined;
}

/**
 * Python OpenProgram's policy: compact before a request that would pass 80%
 * of the model's window, and once when the provider refuses a request as too
 * long. Cheapest first, the size of a request is judged by its UTF-8 size;
 * then by what the provider reported for the previous request of the
 * conversation plus the texts added since, counted with the tokenizer; only
 * when no reported usage fits, by counting the whole request (corrected by
 * how the provider's counts compared with ours). A compaction that fails is
 * reported (a `compaction` event) and the request goes out as it is.
 */
export function contextWindowPolicy(options: ContextWindowPolicyOptions): CompactionPort {
  /** Provider-reported input tokens over our count of the same request, per model (estimates for other vocabularies). */
  const usageRatio = new Map<string, number>();
  /** Windows providers stated in their context-length errors, per model: smaller than configured, they win. */
  const statedWindow = new Map<string, number>();

  const settingsFor = (model: string): CompactionSettings | undefined => {
    const stated = statedWindow.get(model);
    return stated === undefined ? options.settings : { ...options.settings, contextWindow: stated };
  };
  const summarizer = () => ({
    provider: options.provider,
    model: options.model,
    compaction: settingsFor(options.model),
    temperature: options.temperature,
  });
  const compact = (
    scope: CompactionScope,
    how: { reason: CompactionReason; tipId?: string | null; keepRecentTokens?: number },
  ): Promise<CompactionResult> => compactInContext(scope, { summarizer: summarizer(), ...how });
  const resolved = () => resolveCompactionSettings({ model: options.model, compaction: settingsFor(options.model) });

  return {
    settingsFor,
    compact,

    async fit(scope, prompt, model) {
      const settings = resolved();
      if (!settings.autoCompact || tokenUpperBound(prompt.messages) <= settings.threshold) return false;
      if ((await estimateTokens(scope, prompt, model, usageRatio)) <= settings.threshold) return false;
      const compacted = await compact(scope, { reason: "auto", tipId: prompt.tipId }).catch(() => null);
      return Boolean(compacted?.summaryId);
    },

    async recover(scope, prompt, model, error) {
      if (!isContextOverflowError(error) || !resolved().autoCompact) return null;
      const stated = contextLimitFrom(error);
      if (stated !== null && stated < resolved().contextWindow) statedWindow.set(model, stated);
      const compacted = await compact(scope, { reason: "overflow", tipId: prompt.tipId }).catch(() => null);
      return compacted?.summaryId ?? null;
    },

    observe(request: ModelRequest, usage: ReportedUsage | undefined) {
      const input = usage?.inputTokens;
      if (typeof input !== "number" || input <= 0) return;
      // Only once our vocabulary is loaded anyway: learning must not load megabytes on a short session.
      const counted = countChatTokensIfLoaded(request.messages, request.model);
      if (counted === null || counted <= 0) return;
      usageRatio.set(request.model, Math.min(2, Math.max(0.5, input / counted)));
    },
  };
}

/**
 * The request's tokens: the provider's count of the prefix it shares with the
 * last reply plus the texts added since, when a recorded reply fits; else
 * every message counted (counts earlier processes made for this session are
 * reused from its `.state/`), times the provider's ratio to our counts.
 */
async function estimateTokens(
  scope: CompactionScope,
  prompt: WindowedPrompt,
  model: string,
  usageRatio: ReadonlyMap<string, number>,
): Promise<number> {
  const internals = storeInternals(scope.db);
  const stateDir = internals.paths(scope.sessionId).state;
  const count = (messages: readonly ChatMessage[]) =>
    countChatTokensPersisted(messages, model, (vocabulary) => PersistedTokenCounts.open(stateDir, vocabulary));
  const prefix = reportedPrefix(
    prompt.reads,
    internals.snapshotSync(scope.sessionId).byId,
    prompt.system,
    prompt.content,
  );
  if (prefix !== null) return prefix.tokens + (await count(prefix.added));
  return (await count(prompt.messages)) * (usageRatio.get(model) ?? 1);
}

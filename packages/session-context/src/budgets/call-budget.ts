import { countChatTokens } from "../compaction/token-count.js";
import type { ActiveContext } from "../context/types.js";
import type { ModelRequest, ModelResponse } from "../providers/types.js";
import { costOf, priceFor, resolvePriceTable, type ModelPrice } from "../usage/price-table.js";
import { BudgetExceededError, UnpricedModelError } from "./budget-errors.js";
import { MemoryBudgetLedger, type LedgerReservation } from "./budget-ledger.js";
import type { BudgetLimit, Spend } from "./budget-types.js";
import { checkLimit } from "./check-budgets.js";
import type { CapacitySlot, ProviderLimits } from "./provider-limits.js";
import type { ScopeLedger, TurnBudget } from "./turn-budget.js";

/** A model call's reservations, settled once it answered (or failed). */
export interface BudgetHold {
  settle(response: ModelResponse | null): Promise<void>;
}

const NOTHING: Spend = { tokens: 0, cost: 0 };

/**
 * The budgets and provider capacity one exec's model calls are checked
 * against: its own budget (the exec scope, tool loop included), its turn's
 * (turn, session, program), and the provider's `limits`. Before a call, its
 * estimate (input tokens counted, plus `maxTokens`) is reserved at every
 * scope, so a call that would surely cross a limit is not sent, and it waits
 * for room at the provider; after it, what it really used replaces the
 * estimate, and a scope it took past its limit stops the exec (`throwIfCrossed`).
 */
export class CallBudget {
  private readonly started = performance.now();
  private readonly scopesOfExec: ScopeLedger[];
  private crossed: BudgetExceededError | null = null;

  private constructor(
    private readonly turn: TurnBudget | null,
    execLimit: BudgetLimit | undefined,
    private readonly limits: ProviderLimits | null,
    private readonly where: { provider: string; sessionId: string },
  ) {
    this.scopesOfExec = execLimit
      ? [
          {
            scope: "exec",
            limit: execLimit,
            ledger: new MemoryBudgetLedger(),
            key: "exec",
            secondsPassed: () => (performance.now() - this.started) / 1000,
          },
        ]
      : [];
  }

  /** The budget of an exec under `context` (null when no budget or limit applies: calls go out unchecked). */
  static of(
    context: Pick<ActiveContext, "budget" | "limits" | "sessionId">,
    execLimit: BudgetLimit | undefined,
    provider: string,
  ): CallBudget | null {
    if (execLimit !== undefined) checkLimit(execLimit, "exec budget");
    const turn = context.budget ?? null;
    const limit = execLimit ?? turn?.budgets.exec;
    const limits = context.limits ?? null;
    if (!limit && !turn && !limits) return null;
    return new CallBudget(turn, limit, limits, { provider, sessionId: context.sessionId });
  }

  /**
   * Checks every scope for this request and holds its estimate, then waits for the provider's capacity; throws
   * BudgetExceededError, UnpricedModelError, RateLimitedError or CancelledError (holding nothing).
   */
  async reserve(request: ModelRequest, signal: AbortSignal): Promise<BudgetHold> {
    this.throwIfCrossed();
    const scopes = [...this.scopesOfExec, ...(this.turn?.scopes() ?? [])];
    for (const scope of scopes) if (scope.limit.seconds !== undefined) await this.checkTime(scope, "before");
    const priced = scopes.find((scope) => scope.limit.cost !== undefined);
    const price = priced ? this.priceOf(request.model, priced) : null;
    const capacity = this.limits?.capacityOf(this.where.provider, request.model) ?? null;
    const counted =
      capacity?.limit.tokensPerMinute !== undefined ||
      scopes.some((scope) => scope.limit.tokens !== undefined || scope.limit.cost !== undefined);
    const estimate = counted ? await estimateOf(request, price) : NOTHING;
    // Every scope at once (a cluster's are round trips to the database); any refusal gives the others back.
    const limited = scopes.filter((scope) => scope.limit.tokens !== undefined || scope.limit.cost !== undefined);
    const answers = await Promise.all(
      limited.map((scope) => scope.ledger.reserve(scope.key, estimate, scope.limit, scope.seed)),
    );
    const held = limited.flatMap((scope, index) => {
      const answer = answers[index] as LedgerReservation;
      return answer.granted ? [{ scope, id: answer.id }] : [];
    });
    const release = () => Promise.all(held.map(({ scope, id }) => scope.ledger.settle(scope.key, id, NOTHING)));
    const refused = answers.findIndex((answer) => !answer.granted);
    if (refused !== -1) {
      await release();
      const scope = limited[refused] as ScopeLedger;
      const answer = answers[refused] as Extract<LedgerReservation, { granted: false }>;
      const limit = scope.limit[answer.dimension] as number;
      throw new BudgetExceededError(scope.scope, answer.dimension, limit, answer.spent, estimate[answer.dimension]);
    }
    let slot: CapacitySlot | null = null;
    try {
      slot = capacity ? await capacity.acquire(this.where.sessionId, estimate.tokens, signal) : null;
    } catch (error) {
      await release();
      throw error;
    }
    return {
      settle: async (response) => {
        const used = response ? this.spendOf(response, price) : NOTHING;
        slot?.release(response ? used.tokens : null);
        const totals = await Promise.all(held.map(({ scope, id }) => scope.ledger.settle(scope.key, id, used)));
        held.forEach(({ scope }, index) => {
          const total = totals[index] as Spend;
          for (const dimension of ["tokens", "cost"] as const) {
            const limit = scope.limit[dimension];
            if (limit !== undefined && total[dimension] > limit)
              this.crossed ??= new BudgetExceededError(scope.scope, dimension, limit, total[dimension], 0);
          }
        });
        for (const scope of scopes) if (scope.limit.seconds !== undefined) await this.checkTime(scope, "after");
      },
    };
  }

  /** Throws the BudgetExceededError of a scope a call took past its limit (the exec stops after recording the reply). */
  throwIfCrossed(): void {
    if (this.crossed) throw this.crossed;
  }

  /** Wall time: a call may not start once the limit is reached; one that ended past it stops the exec. */
  private async checkTime(scope: ScopeLedger, when: "before" | "after"): Promise<void> {
    const seconds = scope.limit.seconds;
    if (seconds === undefined) return;
    const elapsed = await scope.secondsPassed();
    if (when === "before" && elapsed >= seconds)
      throw new BudgetExceededError(scope.scope, "seconds", seconds, elapsed, 0);
    if (when === "after" && elapsed > seconds)
      this.crossed ??= new BudgetExceededError(scope.scope, "seconds", seconds, elapsed, 0);
  }

  private priceOf(model: string, scope: ScopeLedger): ModelPrice {
    const found = priceFor(this.turn?.prices ?? resolvePriceTable(), model);
    if ("missing" in found) throw new UnpricedModelError(model, scope.scope, found.missing);
    return found.price;
  }

  /** What a reply used: every input token (the Anthropic provider reports cache reads and writes apart) and output. */
  private spendOf(response: ModelResponse, price: ModelPrice | null): Spend {
    const usage = response.usage ?? {};
    const cached = usage.cachedInputTokens ?? 0;
    const separate = this.where.provider === "anthropic";
    const input = (usage.inputTokens ?? 0) + (separate ? cached + (usage.cacheWriteInputTokens ?? 0) : 0);
    const output = usage.outputTokens ?? 0;
    const counts = {
      calls: 1,
      callsWithoutUsage: 0,
      inputTokens: input,
      outputTokens: output,
      cachedInputTokens: cached,
    };
    return { tokens: input + output, cost: price ? costOf(counts, price) : 0 };
  }
}

/** A request's estimate: its messages (and tool definitions) counted, plus all the output `maxTokens` allows. */
async function estimateOf(request: ModelRequest, price: ModelPrice | null): Promise<Spend> {
  const messages = request.tools?.length
    ? [...request.messages, { role: "system" as const, content: JSON.stringify(request.tools) }]
    : request.messages;
  const input = await countChatTokens(messages, request.model);
  const output = request.maxTokens ?? 0;
  const counts = { calls: 1, callsWithoutUsage: 0, inputTokens: input, outputTokens: output, cachedInputTokens: 0 };
  return { tokens: input + output, cost: price ? costOf(counts, price) : 0 };
}

/** Sends a model request within its budgets and limits: reserved before, settled after (given back when it failed). */
export async function spendWithin(
  budget: CallBudget | null | undefined,
  request: ModelRequest,
  signal: AbortSignal,
  send: () => Promise<ModelResponse>,
): Promise<ModelResponse> {
  if (!budget) return send();
  const hold = await budget.reserve(request, signal);
  let response: ModelResponse;
  try {
    response = await send();
  } catch (error) {
    await hold.settle(null);
    throw error;
  }
  await hold.settle(response);
  return response;
}

import { CancelledError } from "../errors.js";
import { RateLimitedError } from "./budget-errors.js";
import { InvalidBudgetError } from "./budget-errors.js";

/** The capacity a provider (or one of its models) gives: every limit absent is no limit. */
export interface CapacityLimit {
  /** Requests in flight at once. */
  maxConcurrent?: number | undefined;
  /** Requests begun in any 60 seconds. */
  requestsPerMinute?: number | undefined;
  /** Tokens (estimated input plus maxTokens when sent, what was used once answered) in any 60 seconds. */
  tokensPerMinute?: number | undefined;
  /** The longest a call waits for room before it fails with RateLimitedError (default 60). */
  maxWaitSeconds?: number | undefined;
}

/** Limits by `"<provider>/<model>"` (that model) or `"<provider>"` (all its models), as in openprogram.config.json. */
export type LimitsConfig = Readonly<Record<string, CapacityLimit>>;

/** A slot of capacity a call holds while in flight. */
export interface CapacitySlot {
  /** Gives the slot back, with the tokens the call really used (they replace its estimate per minute). */
  release(usedTokens: number | null): void;
}

/** A store's answer to a request for room. */
export type CapacityAnswer = { granted: true; id: string } | { granted: false; limit: string };

/**
 * Where a provider's capacity is counted when several processes share it (a
 * cluster's replicas: the dispatcher's PostgreSQL store): the port. Each
 * process still queues its own callers fairly; the store decides, atomically
 * across processes, whether there is room for the one at the head.
 */
export interface CapacityStore {
  /**
   * Takes room for one request of `tokens` under `key` when every limit of `limit` has it, atomically; room goes
   * first to the process whose caller has waited longest (`waitingSince`, epoch milliseconds), so that none starves.
   */
  tryAcquire(key: string, limit: CapacityLimit, tokens: number, waitingSince: number): Promise<CapacityAnswer>;
  /** Gives a request's room back, with the tokens it used (null: keep its estimate within its minute). */
  release(id: string, usedTokens: number | null): Promise<void>;
}

/** How a ProviderLimits counts: alone (this process's memory), or with other processes through a store. */
export interface ProviderLimitsOptions {
  store?: CapacityStore | undefined;
  /** How often a caller waiting on the store asks again when room may have been freed elsewhere (default 50 ms). */
  pollMs?: number | undefined;
}

const MINUTE_MS = 60_000;
const DEFAULT_WAIT_SECONDS = 60;
const DEFAULT_POLL_MS = 50;

interface Waiter {
  sessionId: string;
  tokens: number;
  /** The limit the store last found full for it (what its RateLimitedError names). */
  full?: string;
  /** Date.now() when it began to wait (its place in the line a store keeps across processes). */
  since: number;
  grant: (slot: CapacitySlot) => void;
  fail: (error: Error) => void;
}

/** One key's capacity: what is in flight, what began in the last minute, and who waits, per session. */
export class KeyCapacity {
  private inFlight = 0;
  /** Requests begun in the last minute: when, and their tokens (estimated, then used). */
  private readonly window: { at: number; tokens: number }[] = [];
  /** Waiting calls per session, in arrival order; sessions are served in turn (round robin). */
  private readonly queues = new Map<string, Waiter[]>();
  private lastServed: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** A store's answer is awaited (one at a time: the head of the queue asks, in its turn). */
  private asking = false;
  private pollTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly key: string,
    readonly limit: CapacityLimit,
    private readonly store: CapacityStore | null = null,
    private readonly pollMs = DEFAULT_POLL_MS,
  ) {}

  acquire(sessionId: string, tokens: number, signal: AbortSignal): Promise<CapacitySlot> {
    if (signal.aborted) return Promise.reject(new CancelledError(signal.reason));
    if (!this.store && this.waiting() === 0 && this.blockedBy(tokens) === null)
      return Promise.resolve(this.take(sessionId, tokens, null));
    const started = performance.now();
    return new Promise<CapacitySlot>((resolve, reject) => {
      const waiter: Waiter = {
        sessionId,
        tokens,
        since: Date.now(),
        grant: (slot) => {
          cleanup();
          resolve(slot);
        },
        fail: (error) => {
          cleanup();
          reject(error);
        },
      };
      const seconds = this.limit.maxWaitSeconds ?? DEFAULT_WAIT_SECONDS;
      const deadline = setTimeout(() => {
        this.remove(waiter);
        const waited = (performance.now() - started) / 1000;
        waiter.fail(new RateLimitedError(this.key, this.blockedBy(tokens) ?? waiter.full ?? "queue", waited));
      }, seconds * 1000);
      const onAbort = (): void => {
        this.remove(waiter);
        waiter.fail(new CancelledError(signal.reason));
      };
      const cleanup = (): void => {
        clearTimeout(deadline);
        signal.removeEventListener("abort", onAbort);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      let queue = this.queues.get(sessionId);
      if (!queue) this.queues.set(sessionId, (queue = []));
      queue.push(waiter);
      this.pump();
    });
  }

  /** Calls waiting now (for tests and metrics). */
  waiting(): number {
    let count = 0;
    for (const queue of this.queues.values()) count += queue.length;
    return count;
  }

  /** Which limit a call of `tokens` would cross now, or null when it fits. */
  private blockedBy(tokens: number): string | null {
    const { maxConcurrent, requestsPerMinute, tokensPerMinute } = this.limit;
    if (maxConcurrent !== undefined && this.inFlight >= maxConcurrent) return "maxConcurrent";
    this.expire();
    if (requestsPerMinute !== undefined && this.window.length >= requestsPerMinute) return "requestsPerMinute";
    if (tokensPerMinute !== undefined && this.window.length > 0) {
      const used = this.window.reduce((sum, entry) => sum + entry.tokens, 0);
      if (used + tokens > tokensPerMinute) return "tokensPerMinute";
    }
    return null;
  }

  private take(sessionId: string, tokens: number, storeId: string | null): CapacitySlot {
    this.inFlight++;
    this.lastServed = sessionId;
    const entry = { at: performance.now(), tokens };
    this.window.push(entry);
    let released = false;
    return {
      release: (usedTokens) => {
        if (released) return;
        released = true;
        this.inFlight--;
        if (usedTokens !== null) entry.tokens = usedTokens;
        if (storeId === null || !this.store) {
          this.pump();
          return;
        }
        // The next caller asks the store once it has the room back (a failed release expires with its lease).
        void this.store
          .release(storeId, usedTokens)
          .catch(() => undefined)
          .finally(() => this.pump());
      },
    };
  }

  /** Grants waiting calls while there is room, one session after another (no session waits behind another's many). */
  private pump(): void {
    for (;;) {
      const next = this.nextWaiter();
      if (!next) return;
      const blocked = this.blockedBy(next.tokens);
      if (blocked !== null) {
        // A full window frees itself with time: look again when its oldest request is a minute old.
        if (blocked !== "maxConcurrent") this.wakeAt(this.window[0]);
        return;
      }
      if (this.store) {
        this.askStore(this.store, next);
        return;
      }
      this.remove(next);
      next.grant(this.take(next.sessionId, next.tokens, null));
    }
  }

  /** Asks the store for room for the head of the queue; refused, asks again after `pollMs` (room frees elsewhere). */
  private askStore(store: CapacityStore, next: Waiter): void {
    if (this.asking) return;
    this.asking = true;
    // The line across processes is by the longest wait here (the round robin picks who goes first, not from when).
    const since = Math.min(...[...this.queues.values()].map((queue) => queue[0]?.since ?? Infinity));
    store.tryAcquire(this.key, this.limit, next.tokens, since).then(
      (answer) => {
        this.asking = false;
        if (!answer.granted) {
          next.full = answer.limit;
          this.pollLater();
          return;
        }
        if (!this.isWaiting(next)) {
          // It gave up (its wait ended, or it was cancelled) while the store answered: the room goes back.
          void store.release(answer.id, null).catch(() => undefined);
        } else {
          this.remove(next);
          next.grant(this.take(next.sessionId, next.tokens, answer.id));
        }
        this.pump();
      },
      (error: unknown) => {
        this.asking = false;
        // Nobody can count the capacity now: the call fails at once rather than waiting out its time.
        if (this.isWaiting(next)) {
          this.remove(next);
          next.fail(error instanceof Error ? error : new Error(String(error)));
        }
        this.pump();
      },
    );
  }

  private pollLater(): void {
    if (this.pollTimer) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = null;
      this.pump();
    }, this.pollMs);
    // The waiters' own deadlines keep the process alive while anyone waits.
    this.pollTimer.unref();
  }

  private isWaiting(waiter: Waiter): boolean {
    return this.queues.get(waiter.sessionId)?.includes(waiter) ?? false;
  }

  /** The first waiter of the session after the one served last, in the order sessions began waiting. */
  private nextWaiter(): Waiter | undefined {
    const sessions = [...this.queues.keys()];
    if (sessions.length === 0) return undefined;
    const after = this.lastServed === null ? -1 : sessions.indexOf(this.lastServed);
    const session = sessions[(after + 1) % sessions.length] as string;
    return this.queues.get(session)?.[0];
  }

  private remove(waiter: Waiter): void {
    const queue = this.queues.get(waiter.sessionId);
    if (!queue) return;
    const index = queue.indexOf(waiter);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) {
      // Keeps the round robin's place: the session served last stays findable until another is served.
      this.queues.delete(waiter.sessionId);
    }
    if (this.waiting() > 0) queueMicrotask(() => this.pump());
  }

  private expire(): void {
    const horizon = performance.now() - MINUTE_MS;
    while (this.window.length > 0 && (this.window[0] as { at: number }).at <= horizon) this.window.shift();
  }

  private wakeAt(oldest: { at: number } | undefined): void {
    if (!oldest || this.timer) return;
    const delay = Math.max(0, oldest.at + MINUTE_MS - performance.now()) + 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, delay);
    this.timer.unref();
  }
}

/**
 * A provider's capacity as this process shares it: per `provider/model` (or
 * per provider), at most `maxConcurrent` requests in flight and
 * `requestsPerMinute` / `tokensPerMinute` begun in any minute. A call over a
 * limit waits in a queue that serves sessions in turn, so one session's many
 * calls never starve another's; it fails with RateLimitedError after
 * `maxWaitSeconds`.
 */
export class ProviderLimits {
  private readonly keys = new Map<string, KeyCapacity>();

  /** With `options.store`, the limits hold across every process that shares the store (a cluster's replicas). */
  constructor(
    readonly config: LimitsConfig,
    private readonly options: ProviderLimitsOptions = {},
  ) {
    checkLimits(config);
  }

  /** The capacity a request to this provider and model comes under, or null when no limit names them. */
  capacityOf(provider: string, model: string): KeyCapacity | null {
    const key = Object.hasOwn(this.config, `${provider}/${model}`)
      ? `${provider}/${model}`
      : Object.hasOwn(this.config, provider)
        ? provider
        : null;
    if (key === null) return null;
    let capacity = this.keys.get(key);
    if (!capacity)
      this.keys.set(
        key,
        (capacity = new KeyCapacity(
          key,
          this.config[key] as CapacityLimit,
          this.options.store ?? null,
          this.options.pollMs ?? DEFAULT_POLL_MS,
        )),
      );
    return capacity;
  }

  /** Waits for room for one request (its estimated tokens), in the session's turn; resolves to its slot. */
  acquire(
    target: { provider: string; model: string; sessionId: string; tokens: number },
    signal: AbortSignal,
  ): Promise<CapacitySlot> | null {
    return this.capacityOf(target.provider, target.model)?.acquire(target.sessionId, target.tokens, signal) ?? null;
  }
}

/** Process-wide limits per configuration, so every session of the process shares one queue. */
const shared = new Map<string, ProviderLimits>();

/** The ProviderLimits of this process for a configuration (the same object for the same configuration). */
export function sharedProviderLimits(config: LimitsConfig | ProviderLimits): ProviderLimits {
  if (config instanceof ProviderLimits) return config;
  const key = JSON.stringify(config);
  let limits = shared.get(key);
  if (!limits) shared.set(key, (limits = new ProviderLimits(config)));
  return limits;
}

const LIMIT_KEYS = ["maxConcurrent", "requestsPerMinute", "tokensPerMinute", "maxWaitSeconds"];

/** Limits as configured, checked. */
export function checkLimits(config: unknown, where = "limits"): LimitsConfig {
  if (config === null || typeof config !== "object" || Array.isArray(config))
    throw new InvalidBudgetError(`${where} must be an object like { "openai/gpt-4o-mini": { "maxConcurrent": 2 } }.`);
  for (const [key, limit] of Object.entries(config as Record<string, unknown>)) {
    if (limit === null || typeof limit !== "object" || Array.isArray(limit))
      throw new InvalidBudgetError(`${where}.${key} must be an object of ${LIMIT_KEYS.join(", ")}.`);
    for (const [name, value] of Object.entries(limit as Record<string, unknown>)) {
      if (!LIMIT_KEYS.includes(name))
        throw new InvalidBudgetError(`${where}.${key}.${name} is not a limit; use ${LIMIT_KEYS.join(", ")}.`);
      const whole = name !== "maxWaitSeconds";
      if (typeof value !== "number" || !(value >= (whole ? 1 : 0)) || (whole && !Number.isInteger(value)))
        throw new InvalidBudgetError(
          `${where}.${key}.${name} must be ${whole ? "a whole number of at least 1" : "a number of seconds, 0 or more"}; it is ${JSON.stringify(value)}.`,
        );
    }
  }
  return config as LimitsConfig;
}

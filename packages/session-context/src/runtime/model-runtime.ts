import { createHash } from "node:crypto";
import { requireContext, callIdOf } from "../context/accessors.js";
import type { ActiveContext } from "../context/types.js";
import {
  CancelledError,
  InvalidInputError,
  isCancellation,
  ProviderError,
  serializeError,
  toOpenProgramError,
} from "../errors.js";
import { mintNodeId } from "../ids.js";
import type { ModelProvider, ModelRequest, ModelResponse } from "../providers/types.js";
import type { SessionNode } from "../store/types.js";
import { endChatSpan, failSpan, parentContextOf, startChatSpan } from "../telemetry/spans.js";
import type { ReplaySlot } from "../turns/replay.js";
import { conversationTip, renderPrompt, type RenderedPrompt } from "./render-prompt.js";
import { chatTurnContext } from "./chat.js";
import { editForkPoint } from "../branches/branches.js";
import { StreamedReply } from "./streamed-reply.js";
import type { ChatOptions, ExecOptions, Runtime } from "./types.js";
import { storeInternals } from "../store/store-internals.js";
import { activeSummaryId } from "../compaction/summary-node.js";
import type { CompactionResult } from "../compaction/compact-session.js";
import { resolveCompactionSettings, type CompactionSettings } from "../compaction/compaction-settings.js";
import { contextLimitFrom, isContextOverflowError } from "../compaction/context-overflow.js";
import { PersistedTokenCounts } from "../compaction/persisted-token-counts.js";
import { countChatTokensIfLoaded, countChatTokensPersisted, tokenUpperBound } from "../compaction/token-count.js";
import { usageBound } from "../compaction/usage-estimate.js";

/** Request defaults of a runtime. */
export interface RuntimeDefaults {
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  /** The model's window, how much to keep verbatim, whether to compact by itself (see compactSession). */
  compaction?: CompactionSettings | undefined;
}

/** How a prompt was built, for the llm node. */
interface PromptRecord {
  prompt: RenderedPrompt;
  system: string | null;
  content: string | null;
  kind: "exec" | "chat";
  /** While replaying: where the llm node goes among its caller's calls. */
  slot?: ReplaySlot | null;
  /** The branch tip whose history a compaction for this request summarises. */
  tipId: string | null;
  /** Renders the prompt again from the store (after a compaction). */
  rerender: () => RenderedPrompt;
}

/** The runtime: renders prompts from the session, calls the provider, records llm nodes. */
export class ModelRuntime implements Runtime {
  /** Provider-reported input tokens over our count of the same request, per model (corrects estimates for other vocabularies). */
  private readonly usageRatio = new Map<string, number>();

  constructor(
    readonly provider: ModelProvider,
    readonly model: string,
    private readonly defaults: RuntimeDefaults = {},
  ) {}

  /** Windows providers stated in their context-length errors, per model: smaller than configured, they win. */
  private readonly statedWindow = new Map<string, number>();

  get compaction(): CompactionSettings | undefined {
    const stated = this.statedWindow.get(this.model);
    return stated === undefined ? this.defaults.compaction : { ...this.defaults.compaction, contextWindow: stated };
  }

  async exec(content: string, options: ExecOptions = {}): Promise<string> {
    if (typeof content !== "string")
      throw new InvalidInputError(`runtime.exec(content) needs a string, not ${typeof content}.`);
    const context = requireContext("runtime.exec()");
    const callId = callIdOf(context);
    const { nodes, ordered } = sessionNodes(context);
    const system = context.call?.doc ?? docOf(callId === null ? undefined : nodes.get(callId));
    const meta = storeInternals(context.db).readMetaSync(context.sessionId);
    const headId = callId === null ? meta.head_id : null;
    const replay = context.turn.replay;
    const earlier = replay && callId !== null ? replay.callsOf(callId) : null;
    const render = (): RenderedPrompt => {
      const fresh = sessionNodes(context);
      const summaryId = activeSummaryId(storeInternals(context.db).readMetaSync(context.sessionId));
      return renderPrompt({ ...fresh, callId, headId, summaryId, system, content, earlier });
    };
    const tipId = conversationTip({ nodes, callId, headId });
    const prompt = renderPrompt({
      nodes,
      ordered,
      callId,
      headId,
      summaryId: activeSummaryId(meta),
      system,
      content,
      earlier,
    });
    const record: PromptRecord = { prompt, system, content, kind: "exec", slot: null, tipId, rerender: render };
    // A resumed turn sends the requests it recorded: it never compacts on its own.
    if (!replay) await this.fitToWindow(context, record, options);
    if (replay) {
      const step = replay.enterExec(callId, () => this.bodyDigest(this.request(record, options)));
      if (step.kind === "reuse") return step.output;
      record.slot = step.slot;
    }
    return this.send(context, record, callId, options);
  }

  async chat(text: string, options: ChatOptions = {}): Promise<string> {
    const context = chatTurnContext(text, "runtime.chat()");
    // The turn (its lease) is taken before anything is sent; the user's node is then written while the
    // request goes out, so the first token does not wait on that write. The prompt is rendered from the
    // branch up to the head with the message last: the same messages as rendering from the user's node.
    // Edit and resend forks beside the edited message: checked before the turn begins, so a bad id writes nothing.
    const fork =
      options.from === undefined ? null : editForkPoint(sessionNodes(context).nodes, context.sessionId, options.from);
    await context.beginTurn();
    const { nodes, ordered } = sessionNodes(context);
    const meta = storeInternals(context.db).readMetaSync(context.sessionId);
    const headId = fork ? (fork.predecessor === "ROOT" ? null : fork.predecessor) : meta.head_id;
    const system = options.system ?? null;
    const summaryId = activeSummaryId(meta);
    const rendered = renderPrompt({ nodes, ordered, callId: null, headId, summaryId, system, content: text });
    const renderFrom = (tipId: string | null, content: string | null) => (): RenderedPrompt => {
      const fresh = sessionNodes(context);
      const summary = activeSummaryId(storeInternals(context.db).readMetaSync(context.sessionId));
      return renderPrompt({ ...fresh, callId: null, headId: tipId, summaryId: summary, system, content });
    };
    const first: PromptRecord = {
      prompt: rendered,
      system,
      content: text,
      kind: "chat",
      tipId: headId,
      rerender: renderFrom(headId, text),
    };
    await this.fitToWindow(context, first, options);
    const userId = mintNodeId();
    const prompt = { messages: first.prompt.messages, reads: [...first.prompt.reads, userId] };
    const userWritten = fork
      ? context.writer.append(
          {
            id: userId,
            role: "user",
            output: text,
            caller: "",
            predecessor: fork.predecessor,
            metadata: { edit_of: fork.editedId },
          },
          { becomeHead: true },
        )
      : context.writer.append(
          { id: userId, role: "user", output: text, caller: "" },
          { atHead: true, rootMarker: null },
        );
    // Once the user's node is written the conversation, it included, renders from it (a retry after a compaction).
    const record: PromptRecord = {
      prompt,
      system,
      content: null,
      kind: "chat",
      tipId: userId,
      rerender: renderFrom(userId, null),
    };
    return this.send(context, record, null, options, userWritten);
  }

  /**
   * Compacts first when the request would pass 80% of the model's window.
   * Cheapest first: the request's UTF-8 size; the usage the provider reported
   * for the previous request of the conversation plus what was added since;
   * then the model's tokenizer, corrected by how the provider's counts
   * compared with ours. A compaction that fails is reported (a `compaction`
   * event) and the request goes out as it is.
   */
  private async fitToWindow(context: ActiveContext, record: PromptRecord, options: ExecOptions): Promise<void> {
    const model = options.model ?? this.model;
    const settings = resolveCompactionSettings(this);
    if (!settings.autoCompact || tokenUpperBound(record.prompt.messages) <= settings.threshold) return;
    // The provider's count of the previous request, plus what was added since: no vocabulary to load.
    const reported = usageBound(record.prompt.reads, sessionNodes(context).nodes, record.system, record.content);
    if (reported !== null && reported <= settings.threshold) return;
    // Counts earlier processes made for this session are reused (a changed text is counted again).
    const stateDir = storeInternals(context.db).paths(context.sessionId).state;
    const counted = await countChatTokensPersisted(record.prompt.messages, model, (vocabulary) =>
      PersistedTokenCounts.open(stateDir, vocabulary),
    );
    const tokens = counted * (this.usageRatio.get(model) ?? 1);
    if (tokens <= settings.threshold) return;
    const compacted = await this.compactFor(context, record, "auto").catch(() => null);
    if (compacted?.summaryId) record.prompt = record.rerender();
  }

  /** Runs one compaction of the request's branch in the current turn. */
  private async compactFor(
    context: ActiveContext,
    record: PromptRecord,
    reason: "auto" | "overflow",
  ): Promise<CompactionResult> {
    // Loaded on first use: most sessions never compact.
    const { compactInContext } = await import("../compaction/compact-session.js");
    return compactInContext(context, { runtime: this, reason, tipId: record.tipId });
  }

  /** Learns how the provider's token counts compare with ours (only once our vocabulary is loaded anyway). */
  private learnUsage(request: ModelRequest, inputTokens: number | undefined): void {
    if (typeof inputTokens !== "number" || inputTokens <= 0) return;
    const counted = countChatTokensIfLoaded(request.messages, request.model);
    if (counted === null || counted <= 0) return;
    this.usageRatio.set(request.model, Math.min(2, Math.max(0.5, inputTokens / counted)));
  }

  /** The request a prompt becomes. */
  private request(record: PromptRecord, options: ExecOptions): ModelRequest {
    return {
      model: options.model ?? this.model,
      messages: record.prompt.messages,
      ...definedNumber("maxTokens", options.maxTokens ?? this.defaults.maxTokens),
      ...definedNumber("temperature", options.temperature ?? this.defaults.temperature),
    };
  }

  /** SHA-256 of the body the provider would send, or null when the provider cannot tell without sending. */
  private bodyDigest(request: ModelRequest): string | null {
    const body = this.provider.requestBody?.(request);
    return typeof body === "string" ? createHash("sha256").update(body).digest("hex") : null;
  }

  /** Sends a rendered prompt and records the llm node under `callId` (or on the conversation branch at top level). */
  private async send(
    context: ActiveContext,
    record: PromptRecord,
    callId: string | null,
    options: ExecOptions = {},
    /** A write the llm node must follow (a chat turn's user node), made while the request goes out. */
    before: Promise<unknown> = Promise.resolve(),
  ): Promise<string> {
    const signal = options.signal ? AbortSignal.any([options.signal, context.signal]) : context.signal;
    if (signal.aborted) {
      await before; // a chat turn's message is recorded even when the turn is cancelled before its request
      throw new CancelledError(signal.reason);
    }
    let request = this.request(record, options);
    const model = request.model;
    // The bytes actually sent; until then, the bytes the provider says it will send.
    let body = this.provider.requestBody?.(request) ?? "";
    const started = performance.now();
    const metadata = (): Record<string, unknown> => ({
      execution_kind: record.kind,
      provider: this.provider.name,
      provider_request_count: 1,
      system: record.system,
      prompt_text: record.content,
      prompt_sha256: body === "" ? null : createHash("sha256").update(body).digest("hex"),
      messages_count: record.prompt.messages.length,
      duration_seconds: (performance.now() - started) / 1000,
    });
    const span = startChatSpan(context.trace ?? parentContextOf(null), {
      sessionId: context.sessionId,
      provider: this.provider.name,
      request,
    }).span;
    let replied = false;
    const nodeId = mintNodeId();
    const reply = new StreamedReply((text) =>
      context.emit({ type: "delta", sessionId: context.sessionId, nodeId, text }),
    );
    // The running node is written while the request goes out (not before it): the first token is not kept
    // waiting on the disk. A write that fails stops the request.
    const stopRequest = new AbortController();
    const appended = before
      .then(() =>
        context.writer.append(
          {
            id: nodeId,
            role: "llm",
            name: model,
            output: null,
            caller: callId ?? "",
            reads: record.prompt.reads,
            metadata: { status: "running", ...withoutDuration(metadata()) },
          },
          // A top-level reply hangs on the head; the head moves to it only when it completes.
          callId === null ? { atHead: true, rootMarker: null, moveHead: false } : {},
        ),
      )
      .then(
        () => reply.start(),
        (error: unknown) => {
          stopRequest.abort(error);
          throw error;
        },
      );
    appended.catch(() => undefined); // awaited below; this only marks it handled meanwhile
    record.slot?.fill(nodeId);
    /** Set when the provider refused the request as too long and it was sent again after a compaction. */
    let overflowRetry: { summary_id: string; error: string } | null = null;
    try {
      let response: ModelResponse;
      for (;;) {
        try {
          response = await this.provider.complete(request, {
            signal: AbortSignal.any([signal, stopRequest.signal]),
            onRequestBody: (sent) => (body = sent),
            onText: reply.push,
          });
          break;
        } catch (error) {
          if (overflowRetry || reply.text !== "" || signal.aborted || !isContextOverflowError(error)) throw error;
          if (!resolveCompactionSettings(this).autoCompact || record.slot) throw error;
          // Compact once and send the request again, rendered over the summary; the node says so.
          const stated = contextLimitFrom(error);
          if (stated !== null && stated < resolveCompactionSettings(this).contextWindow)
            this.statedWindow.set(model, stated);
          await appended;
          const compacted = await this.compactFor(context, record, "overflow").catch(() => null);
          if (!compacted?.summaryId) throw error;
          overflowRetry = { summary_id: compacted.summaryId, error: (error as Error).message };
          record.prompt = record.rerender();
          request = this.request(record, options);
          body = this.provider.requestBody?.(request) ?? "";
        }
      }
      this.learnUsage(request, response.usage?.inputTokens);
      replied = true;
      endChatSpan(span, response);
      await appended;
      if (reply.finish(response.text) === null) {
        throw new ProviderError(this.provider.name, null, "the final reply differs from the text it streamed");
      }
      await context.writer.update(
        nodeId,
        {
          output: response.text,
          ...(overflowRetry ? { reads: record.prompt.reads } : {}),
          metadata: {
            status: "completed",
            ...metadata(),
            response_model: response.model,
            usage: response.usage ?? null,
            ...(overflowRetry ? { compaction_retry: overflowRetry } : {}),
          },
        },
        { advanceHead: callId === null },
      );
      return response.text;
    } catch (error) {
      await appended; // a failed write of the running node is the error to report (nothing to update)
      const cancelled = signal.aborted || isCancellation(error);
      const failure = cancelled ? new CancelledError(signal.reason) : toOpenProgramError(error);
      if (!replied) failSpan(span, failure, { cancelled });
      await context.writer.update(nodeId, {
        output: null,
        metadata: {
          status: cancelled ? "cancelled" : "failed",
          ...metadata(),
          ...(overflowRetry ? { compaction_retry: overflowRetry } : {}),
          error: serializeError(failure),
          partial_output: reply.text,
        },
      });
      throw failure;
    }
  }
}

/** The session's nodes, fresh from the store (other processes' writes included). */
function sessionNodes(context: ActiveContext): {
  nodes: ReadonlyMap<string, SessionNode>;
  ordered: readonly SessionNode[];
} {
  const snapshot = storeInternals(context.db).snapshotSync(context.sessionId);
  return { nodes: snapshot.byId, ordered: snapshot.ordered };
}

/** A running node has no duration yet (the final update records it). */
function withoutDuration(metadata: Record<string, unknown>): Record<string, unknown> {
  const { duration_seconds: _duration, ...rest } = metadata;
  return rest;
}

function docOf(node: SessionNode | undefined): string | null {
  const doc = node?.metadata.doc;
  return typeof doc === "string" ? doc : null;
}

function definedNumber<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

import { createHash } from "node:crypto";
import type { Span } from "@opentelemetry/api";
import { spendWithin, type CallBudget } from "../budgets/call-budget.js";
import type { ActiveContext } from "../context/types.js";
import { CancelledError, isCancellation, ProviderError, serializeError, toOpenProgramError } from "../errors.js";
import { mintNodeId } from "../ids.js";
import type { ModelProvider, ModelRequest, ModelResponse } from "../providers/types.js";
import type { AppendOptions } from "../store/types.js";
import type { ReplyRecord } from "../tools/reply-write.js";
import { endChatSpan, failSpan, parentContextOf, startChatSpan } from "../telemetry/spans.js";
import type { CompactionPort } from "./compaction-port.js";
import { windowedPrompt, type PromptRecord } from "./prompt-record.js";
import { RequestAttempts, type RetrySettings } from "./request-attempts.js";
import { RunningNode } from "./running-node.js";
import { StreamedReply } from "./streamed-reply.js";

/** What one model call is made with: the runtime's provider and compaction port, and the request a prompt becomes. */
export interface ModelCallSetup {
  provider: ModelProvider;
  compactor: CompactionPort | null;
  /** The request a prompt record becomes (called again after a compaction renders the prompt anew). */
  request: (record: PromptRecord) => ModelRequest;
  /** The budgets each request is checked against before it is sent and charged after (null: none). */
  budget?: CallBudget | null;
  /** Receives the reply's whole text so far at each streamed piece (an exec's `onPartial`). */
  onText?: (soFar: string) => void;
  /** Retries of failed requests and the exec's deadline; absent: one request, no deadline. */
  retry?: RetrySettings;
}

/** Set when the provider refused a request as too long and it was sent again after a compaction. */
interface OverflowRetry {
  summary_id: string;
  error: string;
}

/**
 * One model request and its llm node, in steps a loop can reuse: `open`
 * starts writing the running node while the request goes out (inside an
 * agentic function, after RUNNING_NODE_DELAY_MS: running-node.ts), `send` calls
 * the provider (streaming deltas; one compaction and retry on a context-length
 * refusal), then `complete` or `fail` records the outcome on the node.
 */
export class ModelCall {
  readonly nodeId = mintNodeId();
  private request: ModelRequest;
  /** The bytes actually sent; until then, the bytes the provider says it will send. */
  private body: string;
  private readonly started = performance.now();
  private readonly span: Span;
  private readonly reply: StreamedReply;
  /** Aborts the request when writing the running node failed. */
  private readonly stopRequest = new AbortController();
  /** Its llm node's running state (made by `open`, the only way to make a call). */
  private node!: RunningNode;
  private replied = false;
  private overflowRetry: OverflowRetry | null = null;

  private constructor(
    private readonly context: ActiveContext,
    private readonly setup: ModelCallSetup,
    private readonly record: PromptRecord,
    /** The call the llm node hangs under, or null for a reply on the conversation branch. */
    private readonly callId: string | null,
    /** The call's own signal and the context's. */
    readonly signal: AbortSignal,
  ) {
    this.request = setup.request(record);
    this.body = setup.provider.requestBody?.(this.request) ?? "";
    this.span = startChatSpan(context.trace ?? parentContextOf(null), {
      sessionId: context.sessionId,
      provider: setup.provider.name,
      request: this.request,
    }).span;
    this.reply = new StreamedReply((text) => {
      context.emit({ type: "delta", sessionId: context.sessionId, nodeId: this.nodeId, text });
      setup.onText?.(this.reply.text);
    });
  }

  /**
   * Step 1: the running llm node is written while the request goes out (not
   * before it), so the first token is not kept waiting on the disk; a write
   * that fails stops the request. `before` is a write the node must follow
   * (a chat turn's user node). A signal already aborted records nothing new
   * and throws CancelledError.
   */
  static async open(
    context: ActiveContext,
    setup: ModelCallSetup,
    record: PromptRecord,
    callId: string | null,
    options: { signal?: AbortSignal | undefined; before?: Promise<unknown> } = {},
  ): Promise<ModelCall> {
    const before = options.before ?? Promise.resolve();
    const signal = options.signal ? AbortSignal.any([options.signal, context.signal]) : context.signal;
    if (signal.aborted) {
      await before; // a chat turn's message is recorded even when the turn is cancelled before its request
      throw new CancelledError(signal.reason);
    }
    const call = new ModelCall(context, setup, record, callId, signal);
    // A top-level reply hangs on the head; the head moves to it only when it completes. Its folder's fsync is not
    // waited for: a power cut that loses this node leaves the request to be sent again, as does one that finds it
    // running.
    const appendOptions: AppendOptions =
      callId === null
        ? { atHead: true, rootMarker: null, moveHead: false, deferNameSync: true }
        : { deferNameSync: true };
    call.node = new RunningNode(
      context.writer,
      {
        id: call.nodeId,
        role: "llm",
        name: call.request.model,
        output: null,
        caller: callId ?? "",
        reads: record.prompt.reads,
        metadata: { status: "running", ...withoutDuration(call.metadata()) },
      },
      appendOptions,
      { written: () => call.reply.start(), failed: (error) => call.stopRequest.abort(error) },
    );
    // A chat's reply is written at once (where it hangs depends on the head as the request goes out); a call inside
    // an agentic function only if its reply is not there first.
    call.node.begin(before, callId !== null);
    record.slot?.fill(call.nodeId);
    return call;
  }

  /**
   * Step 2: the provider call, streamed; after a context-length refusal, one
   * compaction and the request again; after a retryable failure before any
   * text, the request again after a backoff (a `retry` event each), all
   * within the exec's deadline.
   */
  async send(): Promise<ModelResponse> {
    const attempts = new RequestAttempts(this.setup.retry ?? NO_RETRIES, this.signal);
    for (;;) {
      try {
        const signal = attempts.begin();
        const response = await spendWithin(this.setup.budget, this.request, signal, () =>
          this.setup.provider.complete(this.request, {
            signal: AbortSignal.any([signal, this.stopRequest.signal]),
            onRequestBody: (sent) => (this.body = sent),
            onText: this.reply.push,
          }),
        );
        this.setup.compactor?.observe(this.request, response.usage);
        this.replied = true;
        endChatSpan(this.span, response);
        return response;
      } catch (error) {
        if (await this.recoverFromOverflow(error)) continue;
        const next = attempts.next(error, this.reply.text !== "");
        if ("fail" in next) throw next.fail;
        // A retry is reported against the node: listeners and other processes see it running first.
        await this.node.writeNow();
        this.span.addEvent("retry", { attempt: next.retry.attempt, delay_ms: next.retry.delayMs });
        this.context.emit({ type: "retry", sessionId: this.context.sessionId, nodeId: this.nodeId, ...next.retry });
        try {
          this.setup.retry?.onRetry?.(next.retry);
        } catch {
          // A broken hook must not stop the retries (as Python's on_retry).
        }
        await attempts.wait(next.retry);
      }
    }
  }

  /** A compaction after the provider refused the request as too long: true when the request was rendered anew. */
  private async recoverFromOverflow(error: unknown): Promise<boolean> {
    // Once only; never after text arrived, a cancellation, or while replaying (a resumed turn sends what it recorded).
    if (this.overflowRetry || this.reply.text !== "" || this.signal.aborted || this.record.slot) return false;
    if (!this.setup.compactor) return false;
    await this.node.settled();
    const summaryId = await this.setup.compactor.recover(
      this.context,
      windowedPrompt(this.record),
      this.request.model,
      error,
    );
    if (summaryId === null) return false;
    this.overflowRetry = { summary_id: summaryId, error: (error as Error).message };
    this.record.prompt = this.record.rerender();
    this.request = this.setup.request(this.record);
    this.body = this.setup.provider.requestBody?.(this.request) ?? "";
    return true;
  }

  /** Step 3: the reply is recorded on the node (a top-level reply becomes the head). */
  async complete(response: ModelResponse, extra: Record<string, unknown> = {}): Promise<void> {
    const record = await this.completion(response, extra);
    await this.context.writer.writeNodes([record.write], [record.announce]);
  }

  /**
   * Step 3 without the write: the update that records the reply, for a caller that writes it together with the
   * nodes that follow it at once (a reply's tool calls, with their first tool's node: ReplyWrite).
   */
  async completion(response: ModelResponse, extra: Record<string, unknown> = {}): Promise<ReplyRecord> {
    await this.node.settled();
    if (this.reply.finish(response.text) === null) {
      throw new ProviderError(this.setup.provider.name, null, "the final reply differs from the text it streamed");
    }
    return this.outcome(
      {
        output: response.text,
        ...(this.overflowRetry ? { reads: this.record.prompt.reads } : {}),
        metadata: {
          status: "completed",
          ...this.metadata(),
          response_model: response.model,
          usage: response.usage ?? null,
          ...(this.overflowRetry ? { compaction_retry: this.overflowRetry } : {}),
          ...extra,
        },
      },
      // A reply that asked for tools is followed at once by their nodes, whose writes wait for this one's name too
      // (an idempotent tool's running node aside: a power cut then may send the request again).
      { advanceHead: this.callId === null, deferNameSync: Array.isArray(extra.tool_calls) },
    );
  }

  /**
   * The write recording the call's outcome: an update of its running node, or, when that node was never written,
   * the node appended whole as drafted with the outcome in it (announced as its append and then its update).
   */
  private outcome(
    patch: { output: string | null; metadata: Record<string, unknown>; reads?: string[] },
    options: { advanceHead?: boolean; deferNameSync?: boolean },
  ): ReplyRecord {
    const announce = this.node.skip();
    if (!announce) return { write: { op: "update", nodeId: this.nodeId, patch, options } };
    return {
      write: {
        op: "append",
        draft: { ...this.node.draft, ...patch },
        options: options.deferNameSync ? { deferNameSync: true } : {},
      },
      announce,
    };
  }

  /** Step 3, when anything above failed: the node records the failure (or cancellation); returns the error to throw. */
  async fail(error: unknown): Promise<Error> {
    await this.node.settled(); // a failed write of the running node is the error to report (nothing to update)
    const cancelled = this.signal.aborted || isCancellation(error);
    const failure = cancelled ? new CancelledError(this.signal.reason) : toOpenProgramError(error);
    if (!this.replied) failSpan(this.span, failure, { cancelled });
    const record = this.outcome(
      {
        output: null,
        metadata: {
          status: cancelled ? "cancelled" : "failed",
          ...this.metadata(),
          ...(this.overflowRetry ? { compaction_retry: this.overflowRetry } : {}),
          error: serializeError(failure),
          partial_output: this.reply.text,
        },
      },
      {},
    );
    await this.context.writer.writeNodes([record.write], [record.announce]);
    return failure;
  }

  private metadata(): Record<string, unknown> {
    return {
      execution_kind: this.record.kind,
      provider: this.setup.provider.name,
      provider_request_count: 1,
      system: this.record.system,
      prompt_text: this.record.content,
      ...(this.record.blocks ? { content_blocks: this.record.blocks } : {}),
      prompt_sha256: this.body === "" ? null : createHash("sha256").update(this.body).digest("hex"),
      // What the request carried besides its messages, by name: a reader re-rendering it knows it cannot give the bytes.
      ...(this.request.tools?.length ? { tools_offered: this.request.tools.map((offered) => offered.name) } : {}),
      ...(this.request.responseFormat ? { response_format: this.request.responseFormat.name } : {}),
      messages_count: this.record.prompt.messages.length,
      duration_seconds: (performance.now() - this.started) / 1000,
    };
  }
}

const NO_RETRIES: RetrySettings = { maxRetries: 0, timeoutMs: null, deadline: null };

/** A running node has no duration yet (the final update records it). */
function withoutDuration(metadata: Record<string, unknown>): Record<string, unknown> {
  const { duration_seconds: _duration, ...rest } = metadata;
  return rest;
}

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
import type { ModelProvider, ModelRequest } from "../providers/types.js";
import type { SessionNode } from "../store/types.js";
import { endChatSpan, failSpan, parentContextOf, startChatSpan } from "../telemetry/spans.js";
import type { ReplaySlot } from "../turns/replay.js";
import { renderPrompt, type RenderedPrompt } from "./render-prompt.js";
import { chatTurnContext } from "./chat.js";
import { editForkPoint } from "../branches/branches.js";
import { StreamedReply } from "./streamed-reply.js";
import type { ChatOptions, ExecOptions, Runtime } from "./types.js";
import { storeInternals } from "../store/store-internals.js";

/** Request defaults of a runtime. */
export interface RuntimeDefaults {
  maxTokens?: number | undefined;
  temperature?: number | undefined;
}

/** How a prompt was built, for the llm node. */
interface PromptRecord {
  prompt: RenderedPrompt;
  system: string | null;
  content: string | null;
  kind: "exec" | "chat";
  /** While replaying: where the llm node goes among its caller's calls. */
  slot?: ReplaySlot | null;
}

/** The runtime: renders prompts from the session, calls the provider, records llm nodes. */
export class ModelRuntime implements Runtime {
  constructor(
    readonly provider: ModelProvider,
    readonly model: string,
    private readonly defaults: RuntimeDefaults = {},
  ) {}

  async exec(content: string, options: ExecOptions = {}): Promise<string> {
    if (typeof content !== "string")
      throw new InvalidInputError(`runtime.exec(content) needs a string, not ${typeof content}.`);
    const context = requireContext("runtime.exec()");
    const callId = callIdOf(context);
    const { nodes, ordered } = sessionNodes(context);
    const system = context.call?.doc ?? docOf(callId === null ? undefined : nodes.get(callId));
    const headId = callId === null ? storeInternals(context.db).readMetaSync(context.sessionId).head_id : null;
    const replay = context.turn.replay;
    const earlier = replay && callId !== null ? replay.callsOf(callId) : null;
    const prompt = renderPrompt({ nodes, ordered, callId, headId, system, content, earlier });
    const record: PromptRecord = { prompt, system, content, kind: "exec", slot: null };
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
    const headId = fork
      ? fork.predecessor === "ROOT"
        ? null
        : fork.predecessor
      : storeInternals(context.db).readMetaSync(context.sessionId).head_id;
    const system = options.system ?? null;
    const rendered = renderPrompt({ nodes, ordered, callId: null, headId, system, content: text });
    const userId = mintNodeId();
    const prompt = { messages: rendered.messages, reads: [...rendered.reads, userId] };
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
    return this.send(context, { prompt, system, content: null, kind: "chat" }, null, options, userWritten);
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
    const request = this.request(record, options);
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
    try {
      const response = await this.provider.complete(request, {
        signal: AbortSignal.any([signal, stopRequest.signal]),
        onRequestBody: (sent) => (body = sent),
        onText: reply.push,
      });
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
          metadata: {
            status: "completed",
            ...metadata(),
            response_model: response.model,
            usage: response.usage ?? null,
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

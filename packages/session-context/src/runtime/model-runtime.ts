import { createHash } from "node:crypto";
import { requireContext, callIdOf } from "../context/accessors.js";
import type { ActiveContext } from "../context/types.js";
import { InvalidInputError } from "../errors.js";
import { mintNodeId } from "../ids.js";
import { InvalidModelOutputError, serializeError, ToolLoopLimitError } from "../errors.js";
import { toRecordable } from "../json/recordable.js";
import type { ParsedReply, StructuredOutput } from "../structured/structured-output.js";
import { partialObjects } from "../structured/partial-objects.js";
import { invalidReplyMessage, structuredRepliesOf, type StructuredReplies } from "../structured/structured-replies.js";
import type { ModelProvider, ModelRequest, ToolCall } from "../providers/types.js";
import { ReplyWrite } from "../tools/reply-write.js";
import { runToolCalls } from "../tools/run-tool-calls.js";
import { toolLoopOf, type ToolLoop } from "../tools/tool-loop.js";
import type { SessionNodeWriter } from "../store/node-writer.js";
import type { SessionNode } from "../store/types.js";
import { conversationTip, renderPrompt, type RenderedPrompt } from "../prompt/render-prompt.js";
import { chatTurnContext } from "./chat.js";
import { editForkPoint } from "../branches/branches.js";
import type { ChatOptions, ExecOptions, ExecResult, Runtime } from "./types.js";
import { storeInternals } from "../store/internal.js";
import { activeSummaryId } from "../compaction/summary-node.js";
import type { CompactionSettings } from "../compaction/compaction-settings.js";
import { contextWindowPolicy } from "../compaction/window-policy.js";
import type { CompactionPort } from "./compaction-port.js";
import { ModelCall, type ModelCallSetup } from "./model-call.js";
import { ExecDeadline } from "./exec-deadline.js";
import { CallBudget } from "../budgets/call-budget.js";
import type { ExecContent } from "../content/content-blocks.js";
import { resolveContent, type ResolvedContent } from "../content/resolve-content.js";
import { replayedContent } from "../content/replayed-content.js";
import { attachmentSink, sessionAttachments } from "../content/session-attachments.js";
import { retrySettingsOf, type RetrySettings } from "./request-attempts.js";
import { windowedPrompt, type PromptRecord } from "./prompt-record.js";

/** Request defaults of a runtime. */
export interface RuntimeDefaults {
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  /** The model's window, how much to keep verbatim, whether to compact by itself (see compactSession). */
  compaction?: CompactionSettings | undefined;
}

/** The runtime: renders prompts from the session, calls the provider, records llm nodes. */
export class ModelRuntime implements Runtime {
  /** How requests are kept inside the model's window; null: they go out as they are. */
  readonly compactor: CompactionPort | null;

  /**
   * @param compactor the compaction port; default Python OpenProgram's policy
   *   (`contextWindowPolicy`) over this provider and model with `defaults.compaction`;
   *   null: never compact
   */
  constructor(
    readonly provider: ModelProvider,
    readonly model: string,
    /** The request settings every exec starts from (a child process relaying its calls is built with the same). */
    readonly defaults: RuntimeDefaults = {},
    compactor?: CompactionPort | null,
  ) {
    this.compactor =
      compactor !== undefined
        ? compactor
        : contextWindowPolicy({ provider, model, settings: defaults.compaction, temperature: defaults.temperature });
  }

  get compaction(): CompactionSettings | undefined {
    return this.compactor ? this.compactor.settingsFor(this.model) : this.defaults.compaction;
  }

  async exec<Options extends ExecOptions = ExecOptions>(
    content: ExecContent,
    options: Options = {} as Options,
  ): Promise<ExecResult<Options>> {
    if (typeof content !== "string" && !Array.isArray(content))
      throw new InvalidInputError(
        `runtime.exec(content) needs a string or an array of content blocks, not ${typeof content}.`,
      );
    const context = requireContext("runtime.exec()");
    const loop = toolLoopOf(options);
    const structured = structuredRepliesOf(options);
    const retry = retrySettingsOf(options, this.provider.maxRetries, Date.now());
    const callId = callIdOf(context);
    const replay = context.turn.replay;
    const attachments = sessionAttachments(context);
    // A resumed turn sends the blocks it recorded (the files may have changed or gone since).
    const blocks =
      typeof content === "string"
        ? null
        : (replayedContent(replay?.peekExec(callId) ?? null, content, attachments) ??
          (await resolveContent(content, () => attachmentSink(context))));
    const system = context.call?.doc ?? docOf(callId === null ? undefined : sessionNodes(context).nodes.get(callId));
    /** The prompt of the next request: the first carries `content`, later ones the replies and tool results since. */
    const execRecord = (content: string | null, first: ResolvedContent | null = null): PromptRecord => {
      const { nodes, ordered } = sessionNodes(context);
      const meta = storeInternals(context.db).readMetaSync(context.sessionId);
      const headId = callId === null ? meta.head_id : null;
      const earlier = replay && callId !== null ? replay.callsOf(callId) : null;
      const contentParts = first?.parts ?? null;
      const render = (): RenderedPrompt => {
        const fresh = sessionNodes(context);
        const summaryId = activeSummaryId(storeInternals(context.db).readMetaSync(context.sessionId));
        return renderPrompt({
          ...fresh,
          callId,
          headId,
          summaryId,
          system,
          content,
          contentParts,
          earlier,
          attachments,
        });
      };
      const summaryId = activeSummaryId(meta);
      const prompt = renderPrompt({
        nodes,
        ordered,
        callId,
        headId,
        summaryId,
        system,
        content,
        contentParts,
        earlier,
        attachments,
      });
      const tipId = conversationTip({ nodes, callId, headId });
      return {
        prompt,
        system,
        content,
        kind: "exec",
        slot: null,
        tipId,
        rerender: render,
        ...(first ? { blocks: first.recorded } : {}),
      };
    };
    return (await this.converse(
      context,
      callId,
      { loop, structured },
      { ...options, retry },
      blocks ? execRecord(blocks.text, blocks) : execRecord(content as string),
      execRecord,
    )) as ExecResult<Options>;
  }

  async chat(text: string, options: ChatOptions = {}): Promise<string> {
    const context = chatTurnContext(text, "runtime.chat()");
    // The turn (its lease) is taken before anything is sent; the user's node is then written while the
    // request goes out, so the first token does not wait on that write. The prompt is rendered from the
    // branch up to the head with the message last: the same messages as rendering from the user's node.
    // Edit and resend forks beside the edited message: checked before the turn begins, so a bad id writes nothing.
    const fork =
      options.from === undefined ? null : editForkPoint(sessionNodes(context).nodes, context.sessionId, options.from);
    const retry = retrySettingsOf(options, this.provider.maxRetries, Date.now());
    await context.beginTurn();
    const { nodes, ordered } = sessionNodes(context);
    const meta = storeInternals(context.db).readMetaSync(context.sessionId);
    const headId = fork ? (fork.predecessor === "ROOT" ? null : fork.predecessor) : meta.head_id;
    const system = options.system ?? null;
    const summaryId = activeSummaryId(meta);
    const attachments = sessionAttachments(context);
    const rendered = renderPrompt({
      nodes,
      ordered,
      callId: null,
      headId,
      summaryId,
      system,
      content: text,
      attachments,
    });
    const renderFrom = (tipId: string | null, content: string | null) => (): RenderedPrompt => {
      const fresh = sessionNodes(context);
      const summary = activeSummaryId(storeInternals(context.db).readMetaSync(context.sessionId));
      return renderPrompt({ ...fresh, callId: null, headId: tipId, summaryId: summary, system, content, attachments });
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
    /** After tool calls: the branch up to its head (the reply that asked), then the results. */
    const nextRecord = (content: string | null): PromptRecord => {
      const headNow = storeInternals(context.db).readMetaSync(context.sessionId).head_id;
      const rerender = renderFrom(headNow, content);
      return { prompt: rerender(), system, content, kind: "chat", tipId: headNow, rerender };
    };
    const shape = { loop: toolLoopOf(options), structured: null };
    return (await this.converse(
      context,
      null,
      shape,
      { ...options, retry },
      record,
      nextRecord,
      userWritten,
    )) as string;
  }

  /** Asks the compaction port to make room before a request; the prompt is rendered again when it compacted. */
  private async fitToWindow(context: ActiveContext, record: PromptRecord, options: ExecOptions): Promise<void> {
    if (!this.compactor) return;
    if (await this.compactor.fit(context, windowedPrompt(record), options.model ?? this.model))
      record.prompt = record.rerender();
  }

  /** The request a prompt becomes (with the loop's tools, when it has some). */
  private request(record: PromptRecord, options: RequestOptions): ModelRequest {
    const loop = options.loop;
    return {
      model: options.model ?? this.model,
      messages: record.prompt.messages,
      ...definedNumber("maxTokens", options.maxTokens ?? this.defaults.maxTokens),
      ...definedNumber("temperature", options.temperature ?? this.defaults.temperature),
      ...(loop
        ? {
            tools: loop.definitions,
            ...(options.toolChoice !== undefined ? { toolChoice: options.toolChoice } : {}),
            ...(options.parallelToolCalls !== undefined ? { parallelToolCalls: options.parallelToolCalls } : {}),
          }
        : {}),
      ...(options.structured
        ? {
            responseFormat: {
              name: options.structured.name,
              schema: options.structured.jsonSchema,
              strict: options.structured.strict,
            },
          }
        : {}),
    };
  }

  /** SHA-256 of the body the provider would send, or null when the provider cannot tell without sending. */
  private bodyDigest(request: ModelRequest): string | null {
    const body = this.provider.requestBody?.(request);
    return typeof body === "string" ? createHash("sha256").update(body).digest("hex") : null;
  }

  /** What a model call of this runtime is made with, for one exec or chat's options. */
  private callSetup(options: RequestOptions): ModelCallSetup {
    return {
      provider: this.provider,
      compactor: this.compactor,
      request: (record) => this.request(record, options),
      budget: options.guard ?? null,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.structured && options.onPartial ? { onText: partialObjects(options.onPartial) } : {}),
    };
  }

  /**
   * Sends requests until the model answers without asking for tools: each
   * request records its llm node (under `callId`, or on the conversation
   * branch at top level); each tool call it asks for runs and is recorded
   * under that node, and the next request reads the results. Without tools it
   * is one request. A resumed turn reuses recorded replies (and their tools'
   * recorded results) instead of asking again.
   */
  private async converse(
    context: ActiveContext,
    callId: string | null,
    shape: { loop: ToolLoop | null; structured: StructuredReplies | null },
    /** With `retry` when the caller checked it before writing anything. */
    options: RequestOptions,
    first: PromptRecord,
    /** The next request's prompt: the replies and tool results since, then `content` (a schema retry's problem). */
    next: (content: string | null) => PromptRecord,
    /** A write the first llm node must follow (a chat turn's user node), made while the request goes out. */
    before?: Promise<unknown>,
  ): Promise<unknown> {
    const retry = options.retry ?? retrySettingsOf(options, this.provider.maxRetries, Date.now());
    // timeoutMs covers the tools too: the deadline interrupts a tool still running and fails the exec.
    const deadline = new ExecDeadline(retry);
    try {
      return await this.exchange(context, callId, shape, { ...options, retry }, deadline, first, next, before);
    } catch (error) {
      throw deadline.errorFor(error, options.signal?.aborted === true || context.signal.aborted);
    } finally {
      deadline.dispose();
    }
  }

  /** converse's requests and tool runs, within `deadline`. */
  private async exchange(
    context: ActiveContext,
    callId: string | null,
    shape: { loop: ToolLoop | null; structured: StructuredReplies | null },
    options: RequestOptions & { retry: RetrySettings },
    deadline: ExecDeadline,
    first: PromptRecord,
    next: (content: string | null) => PromptRecord,
    before: Promise<unknown> | undefined,
  ): Promise<unknown> {
    const { loop, structured } = shape;
    const retry = options.retry;
    const replay = first.kind === "exec" ? context.turn.replay : null;
    let toolChoice = loop?.toolChoice;
    let record = first;
    let invalidReplies = 0;
    const guard = CallBudget.of(context, options.budget, this.provider.name);
    for (let iteration = 1; ; iteration++) {
      const requestOptions: RequestOptions = {
        ...options,
        guard,
        ...(loop ? { loop, toolChoice } : {}),
        ...(structured ? { structured: structured.output } : {}),
        retry,
      };
      // A resumed turn sends the requests it recorded: it never compacts on its own (a chat turn fitted its first).
      if (!replay && (record.kind === "exec" || iteration > 1)) await this.fitToWindow(context, record, options);
      let reply: Reply;
      const step = replay?.enterExec(callId, () => this.bodyDigest(this.request(record, requestOptions))) ?? null;
      if (step?.kind === "reuse") reply = await recordedReply(step.node, structured, context.writer);
      else {
        record.slot = step?.slot ?? null;
        reply = await this.send(context, record, callId, requestOptions, iteration === 1 ? before : undefined);
        // The reply is recorded (or held, to be written with its first tool's node); a budget it took past its limit
        // stops the exec here, and its node says so.
        await this.stopIfCrossed(context, guard, reply);
      }
      if (!loop || reply.toolCalls.length === 0) {
        if (!structured || !reply.parsed) return reply.text;
        if (reply.parsed.ok) return await structured.result(reply.parsed.value);
        // The invalid reply stays the assistant's message; the problem follows it as the next request's content.
        if (++invalidReplies > structured.retries)
          throw new InvalidModelOutputError(reply.parsed.problem, reply.text, invalidReplies);
        record = next(invalidReplyMessage(reply.parsed.problem));
        continue;
      }
      if (iteration >= loop.maxIterations) {
        await reply.record.flush();
        throw new ToolLoopLimitError(
          loop.maxIterations,
          reply.toolCalls.map((call) => call.name),
        );
      }
      await runToolCalls(context, loop.tools, reply.toolCalls, {
        reply: reply.record,
        llmNodeId: reply.nodeId,
        model: reply.model,
        doc: record.system ?? "",
        signal: deadline.bound(options.signal ? AbortSignal.any([options.signal, context.signal]) : context.signal),
        serial: options.parallelToolCalls === false,
        failures: loop.failures,
      });
      // A forced tool call is forced once: the model must be free to answer after it (as OpenAI Agents resets it).
      if (toolChoice === "required" || typeof toolChoice === "object") toolChoice = "auto";
      record = next(null);
    }
  }

  /** Sends one rendered prompt and records its llm node; resolves to the reply. */
  /**
   * Throws the BudgetExceededError of a budget the reply just recorded took past its limit, after noting it on
   * that llm node (`stopped_by_budget`): a chat turn has no call of its own to record the failure, and the page
   * names the budget that stopped a turn from the record.
   */
  private async stopIfCrossed(context: ActiveContext, guard: CallBudget | null, reply: Reply): Promise<void> {
    try {
      guard?.throwIfCrossed();
    } catch (error) {
      await reply.record.flush();
      await context.writer.update(reply.nodeId, { metadata: { stopped_by_budget: serializeError(error) } });
      throw error;
    }
  }

  private async send(
    context: ActiveContext,
    record: PromptRecord,
    callId: string | null,
    options: RequestOptions,
    before: Promise<unknown> | undefined,
  ): Promise<Reply> {
    const call = await ModelCall.open(context, this.callSetup(options), record, callId, {
      signal: options.signal,
      ...(before ? { before } : {}),
    });
    try {
      const response = await call.send();
      const toolCalls = response.toolCalls ?? [];
      const parsed =
        options.structured && toolCalls.length === 0 ? await options.structured.parse(response.text) : null;
      const extra = { ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}), ...parsedMetadata(parsed) };
      // A reply whose tools the loop runs is written with the first tool's node (ReplyWrite); any other now.
      const held = options.loop && toolCalls.length > 0 ? await call.completion(response, extra) : null;
      if (!held) await call.complete(response, extra);
      const record = new ReplyWrite(context.writer, held);
      return { text: response.text, toolCalls, nodeId: call.nodeId, model: response.model, parsed, record };
    } catch (error) {
      throw await call.fail(error);
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

/** One request's options: the exec's, plus the loop's tools, this iteration's tool choice, the reply's schema. */
interface RequestOptions extends ExecOptions {
  loop?: ToolLoop;
  structured?: StructuredOutput;
  /** The exec's budgets (null: none apply). */
  guard?: CallBudget | null;
  /** The exec's retries and deadline, one for all its requests. */
  retry?: RetrySettings;
}

/** What a reply said and where it is recorded. */
interface Reply {
  text: string;
  toolCalls: ToolCall[];
  nodeId: string;
  model: string;
  /** Against the exec's schema (a final reply of an exec with one), else null. */
  parsed: ParsedReply | null;
  /** The reply's record, when it is held to be written with its first tool's node; flushed by whatever comes next. */
  record: ReplyWrite;
}

/** A recorded reply, as a resumed turn reuses it (parsed again: the schema decides, not the record). */
async function recordedReply(
  node: SessionNode,
  structured: StructuredReplies | null,
  writer: SessionNodeWriter,
): Promise<Reply> {
  const calls = Array.isArray(node.metadata.tool_calls) ? (node.metadata.tool_calls as ToolCall[]) : [];
  const text = node.output as string;
  const parsed = structured && calls.length === 0 ? await structured.output.parse(text) : null;
  return { text, toolCalls: calls, nodeId: node.id, model: node.name, parsed, record: new ReplyWrite(writer, null) };
}

/** What an llm node records of its reply's parse: the value, or the problem sent back to the model. */
function parsedMetadata(parsed: ParsedReply | null): Record<string, unknown> {
  if (!parsed) return {};
  return parsed.ok ? { parsed_output: toRecordable(parsed.value) } : { output_error: parsed.problem };
}

function docOf(node: SessionNode | undefined): string | null {
  const doc = node?.metadata.doc;
  return typeof doc === "string" ? doc : null;
}

function definedNumber<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

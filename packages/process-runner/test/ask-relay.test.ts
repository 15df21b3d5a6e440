import { agenticFunction, sessionContext, type Asker, type SessionNode } from "@openprogram/session-context";
import { createScriptedAsker } from "@openprogram/session-context/testing";
import { describe, expect, it } from "vitest";
import { runInChild } from "../src/index.js";
import { pickDataset } from "./programs/ask.js";
import { eventRecorder, noProviderEnv, programPath, useTempStore } from "./helpers.js";
import { normaliseNodes } from "./normalise.js";

const ASK = programPath("ask.ts");

describe("ask_user in the child goes to the parent's asker", () => {
  const store = useTempStore();

  it("relays the question, returns the answer to the child and records the ask_user node once", async () => {
    const asker = createScriptedAsker(["2"]);
    const recorder = eventRecorder();
    const plan = agenticFunction({ name: "plan", doc: "Plan the run." }, async () =>
      runInChild({
        module: ASK,
        export: "pickDataset",
        input: { purpose: "a quick baseline" },
        env: noProviderEnv(store),
      }),
    );
    const { sessionId, output } = await sessionContext(
      { db: store.db, runtime: null, asker, onEvent: recorder.onEvent, source: "test" },
      async (session) => ({
        sessionId: session.sessionId,
        output: await plan({}),
      }),
    );
    expect(output).toEqual({ dataset: "cifar10" });

    const nodes = await store.db.loadNodes(sessionId);
    const asks = nodes.filter((node) => node.name === "ask_user");
    expect(asks).toHaveLength(1);
    const ask = asks[0] as SessionNode;
    const call = nodes.find((node) => node.name === "pick_dataset") as SessionNode;
    expect(call.caller).toBe(nodes.find((node) => node.name === "plan")?.id);
    expect(ask.caller).toBe(call.id);
    expect(ask.input).toBe("Which dataset for a quick baseline?");
    expect(ask.output).toBe("cifar10");
    expect(ask.metadata.status).toBe("answered");
    // The parent's asker got the child's question, under the child's node id.
    expect(asker.questions).toHaveLength(1);
    expect(asker.questions[0]).toMatchObject({
      questionId: ask.id,
      sessionId,
      question: ask.input,
      choices: ["mnist", "cifar10", "imagenet"],
    });
    const kinds = recorder.events.map((event) =>
      event.type === "status"
        ? `status ${event.status}`
        : event.type === "node"
          ? `${event.op} ${event.node.name}`
          : event.type,
    );
    expect(kinds).toEqual([
      "status running",
      "append plan",
      "append pick_dataset",
      "append ask_user",
      "status needs_input",
      "question",
      "update ask_user",
      "question_closed",
      "status running",
      "update pick_dataset",
      "update plan",
      "status idle",
    ]);
    expect(recorder.events.find((event) => event.type === "question")).toMatchObject({
      questionId: ask.id,
      question: ask.input,
    });
    expect(recorder.events.find((event) => event.type === "question_closed")).toMatchObject({
      questionId: ask.id,
      outcome: "answered",
    });
  });

  it("a declined question fails the child's call with UserDeclinedError", async () => {
    const asker = createScriptedAsker([{ decline: true, reason: "not now" }]);
    const { sessionId, error } = await sessionContext(
      { db: store.db, runtime: null, asker, source: "test" },
      async (session) => ({
        sessionId: session.sessionId,
        error: await runInChild({
          module: ASK,
          export: "pickDataset",
          input: { purpose: "x" },
          env: noProviderEnv(store),
        }).result.catch((caught: unknown) => caught),
      }),
    );
    expect(error).toMatchObject({ name: "UserDeclinedError", code: "user_declined" });
    const ask = (await store.db.loadNodes(sessionId)).find((node) => node.name === "ask_user");
    expect(ask?.metadata).toMatchObject({ status: "declined", reason: "not now" });
  });

  it("with no asker in the parent, the child's askUser fails with AskUserUnavailableError, recorded as in-process", async () => {
    const run = async (viaChild: boolean): Promise<{ sessionId: string; error: unknown }> =>
      sessionContext({ db: store.db, runtime: null, asker: null, source: "test" }, async (session) => ({
        sessionId: session.sessionId,
        error: await (
          viaChild
            ? runInChild({ module: ASK, export: "pickDataset", input: { purpose: "x" }, env: noProviderEnv(store) })
                .result
            : pickDataset({ purpose: "x" })
        ).catch((caught: unknown) => caught),
      }));
    const inProcess = await run(false);
    const inChild = await run(true);
    expect(inChild.error).toMatchObject({
      name: "AskUserUnavailableError",
      code: "ask_user_unavailable",
      message: (inProcess.error as Error).message,
    });
    const nodes = await store.db.loadNodes(inChild.sessionId);
    expect(nodes.find((node) => node.name === "ask_user")?.metadata.status).toBe("failed");
    expect(nodes.find((node) => node.name === "pick_dataset")?.metadata.status).toBe("failed");
    expect(normaliseNodes(nodes)).toEqual(normaliseNodes(await store.db.loadNodes(inProcess.sessionId)));
  });

  it("stopping the child while it waits withdraws the question from the parent's asker", async () => {
    let askerSignal: AbortSignal | null = null;
    let asked: () => void = () => undefined;
    const questionArrived = new Promise<void>((resolve) => (asked = resolve));
    const waitingAsker: Asker = {
      ask: (_request, { signal }) =>
        new Promise((_resolve, reject) => {
          askerSignal = signal;
          asked();
          signal.addEventListener("abort", () => reject(new Error("withdrawn")), { once: true });
        }),
    };
    const { sessionId, error } = await sessionContext(
      { db: store.db, runtime: null, asker: waitingAsker, source: "test" },
      async (session) => {
        const run = runInChild({
          module: ASK,
          export: "pickDataset",
          input: { purpose: "x" },
          env: noProviderEnv(store),
          graceMs: 60_000,
        });
        await questionArrived;
        await run.stop("the user closed the tab");
        return { sessionId: session.sessionId, error: await run.result.catch((caught: unknown) => caught) };
      },
    );
    expect(error).toMatchObject({
      name: "CancelledError",
      code: "cancelled",
      message: "Cancelled: the user closed the tab",
    });
    expect((askerSignal as AbortSignal | null)?.aborted).toBe(true);
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.find((node) => node.name === "ask_user")?.metadata.status).toBe("cancelled");
    expect(nodes.find((node) => node.name === "pick_dataset")?.metadata.status).toBe("cancelled");
  });

  it("a question that times out in the child is withdrawn from the parent's asker and the default is used", async () => {
    let askerSignal: AbortSignal | null = null;
    const silentAsker: Asker = {
      ask: (_request, { signal }) =>
        new Promise((_resolve, reject) => {
          askerSignal = signal;
          signal.addEventListener("abort", () => reject(new Error("withdrawn")), { once: true });
        }),
    };
    const { sessionId, output } = await sessionContext(
      { db: store.db, runtime: null, asker: silentAsker, source: "test" },
      async (session) => ({
        sessionId: session.sessionId,
        output: await runInChild({ module: ASK, export: "pickDatasetQuickly", env: noProviderEnv(store) }),
      }),
    );
    expect(output).toEqual({ dataset: "mnist" });
    // Withdrawn because the child stopped waiting, not merely because it ended.
    expect((askerSignal as AbortSignal | null)?.reason).toBe("the child stopped waiting");
    const ask = (await store.db.loadNodes(sessionId)).find((node) => node.name === "ask_user");
    expect(ask?.metadata).toMatchObject({ status: "timed_out", used_default: true });
    expect(ask?.output).toBe("mnist");
  });
});

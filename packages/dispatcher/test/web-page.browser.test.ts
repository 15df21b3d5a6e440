import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agenticFunction, askUser, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import {
  createTempStore,
  scriptedRuntime,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from "@openprogram/session-context/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDispatcher, resolveServeConfig, serve, type LogEntry, type ServeProcess } from "../src/index.js";
import { launchChromium, screenshots, UI_WAIT } from "./browser-kit.js";
import { closeAll, onCleanup, serveInChild, startDispatcher, type TestDispatcher } from "./helpers.js";

/** `serve()` from dist/ in a child process (the kill -9 test), and the token it is given. */
const SERVE_CHILD = fileURLToPath(new URL("./fixtures/serve-child.mjs", import.meta.url));
const KILL_TOKEN = "browser-kill-token-0123456789abcdef";

/** What the page's scrolling panes offer (the tests run without the DOM's types). */
interface Scrolled {
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
}

const pickColor = agenticFunction(
  { name: "pick_color", doc: "Ask the user for a favourite color, then describe it in one line." },
  async (_: Record<string, never>, { runtime }) => {
    const color = await askUser("Which color?", { choices: ["red", "blue"] });
    return runtime.exec(`Describe ${color}.`);
  },
);

let browser: Browser | undefined;
let served: TestDispatcher;
let page: Page;
let pageErrors: string[];

/** The browser, launched on first use; a missing Chromium fails the test that needs it (never a skip). */
async function launched(): Promise<Browser> {
  browser ??= await launchChromium();
  return browser;
}

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  await page?.close();
  await closeAll();
});

/** The page's muted and error colours (style.css --muted, --bad) as computed styles give them. */
const MUTED = "rgb(93, 104, 117)";
const RED = "rgb(180, 35, 24)";

async function colorOf(locator: ReturnType<Page["locator"]>): Promise<string> {
  return locator.evaluate(
    (element) =>
      (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(element).color,
  );
}

/** Console errors the browser logs for a server that is down; expected while the page reconnects. */
function withoutNetworkErrors(errors: string[]): string[] {
  return errors.filter(
    (error) => !/ERR_CONNECTION_REFUSED|WebSocket connection to .* failed|Failed to fetch/.test(error),
  );
}

/** A box of an element in CSS pixels. */
interface Box {
  top: number;
  bottom: number;
}

async function boxOf(locator: ReturnType<Page["locator"]>): Promise<Box> {
  const box = await locator.boundingBox();
  if (!box) throw new Error("the element is not shown");
  return { top: box.y, bottom: box.y + box.height };
}

async function openPage(path = "/"): Promise<Page> {
  page = await (await launched()).newPage();
  pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
  await page.goto(`${served.dispatcher.url}${path}`);
  await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
  expect(await page.locator("#token-form").isVisible()).toBe(false);
  return page;
}

describe("the web page in Chromium", () => {
  it("starts a session, streams the answer, answers a question in the dialog, shows the call tree, and continues after a reload", async () => {
    const { runtime } = scriptedRuntime([
      "Hello from the model",
      "Blue is the color of the sky.",
      "The doc stays open.",
      "Still here.",
    ]);
    served = await startDispatcher({ runtime, programs: { pick_color: pickColor } });
    await openPage();

    await page.fill("#chat-input", "Hi there");
    await page.click("#chat-send");
    const sessionId = page.locator("#session-id");
    await expect.poll(() => sessionId.textContent(), UI_WAIT).toMatch(/^session_[0-9a-f]{10}$/);
    const id = (await sessionId.textContent()) as string;
    await page.locator("#messages li.llm", { hasText: "Hello from the model" }).waitFor(UI_WAIT);
    await page.locator("#messages li.user", { hasText: "Hi there" }).waitFor(UI_WAIT);
    expect(new URL(page.url()).searchParams.get("session")).toBe(id);
    await page.locator("#session-list li", { hasText: "Hi there" }).waitFor(UI_WAIT);

    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "pick_color");
    expect(await page.textContent("#program-doc")).toContain("favourite color");
    await page.fill("#program-input", "{}");
    await page.click("#run-submit");
    const dialog = page.locator("#question-dialog");
    await dialog.locator("#question-text", { hasText: "Which color?" }).waitFor(UI_WAIT);
    // <dialog> and <details> reflect their state in the `open` attribute.
    expect(await dialog.getAttribute("open")).not.toBeNull();
    // With choices the dialog offers buttons, not a free-text answer.
    expect(await dialog.locator("#question-free").isVisible()).toBe(false);
    await dialog.getByRole("button", { name: "blue" }).click();
    await page.locator("#messages li.code .result", { hasText: "Blue is the color of the sky." }).waitFor(UI_WAIT);
    await expect.poll(() => dialog.getAttribute("open"), UI_WAIT).toBeNull();

    const call = page.locator("#call-tree > li", { hasText: "pick_color" });
    await call.locator(".call .status-completed").first().waitFor(UI_WAIT);
    await call.locator("ul li", { hasText: "ask_user: Which color?" }).locator(".status-answered").waitFor(UI_WAIT);
    await call.locator("ul li .role", { hasText: "llm" }).waitFor(UI_WAIT);
    expect(await call.locator(".call .duration").first().textContent()).toMatch(/\d+(\.\d+)? m?s$/);
    const doc = call.locator("details").first();
    expect(await doc.getAttribute("open")).toBeNull();
    await doc.locator("summary").click();
    await doc.locator("pre", { hasText: "Ask the user for a favourite color" }).waitFor(UI_WAIT);
    // A turn's frames rebuild the tree; the block the reader opened stays open through them.
    await page.fill("#chat-input", "Is the doc still open?");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "The doc stays open." }).waitFor(UI_WAIT);
    expect(await doc.getAttribute("open")).not.toBeNull();
    expect(await doc.locator("pre", { hasText: "Ask the user for a favourite color" }).isVisible()).toBe(true);

    const recorded = await served.store.db.loadNodes(id);
    expect(recorded.find((node) => node.name === "ask_user")?.output).toBe("blue");

    // Reloading with ?session=<id> continues the same session.
    await page.close();
    await openPage(`/?session=${id}`);
    await page.locator("#messages li.llm", { hasText: "Hello from the model" }).waitFor(UI_WAIT);
    await page.fill("#chat-input", "Are you still there?");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "Still here." }).waitFor(UI_WAIT);
    expect(await page.textContent("#session-id")).toBe(id);
    expect(
      (await served.store.db.loadNodes(id))
        .filter((node) => node.role === "user" && node.name !== "ask_user")
        .map((node) => node.output),
    ).toEqual(["Hi there", "Is the doc still open?", "Are you still there?"]);
    expect(pageErrors).toEqual([]);
  });

  it("shows a slow reply as it streams, keeps the reader's place when scrolled up, and Stop cuts it short", async () => {
    const lines = Array.from({ length: 300 }, (_, index) => `line ${index}\n`);
    const slowChat = [{ chunks: lines, chunkDelayMs: 25 }];
    const program = agenticFunction({ name: "tell", doc: "Tell a long story." }, async (_: unknown, { runtime }) =>
      runtime.exec("Go on."),
    );
    const { runtime } = scriptedRuntime([...slowChat, { chunks: lines, chunkDelayMs: 25 }]);
    served = await startDispatcher({ runtime, programs: { tell: program } });
    await openPage();
    await page.fill("#chat-input", "Tell me a long story");
    await page.click("#chat-send");
    const reply = page.locator("#messages li.llm.streaming");
    await reply.filter({ hasText: "line 40" }).waitFor(UI_WAIT);
    // Partial text before the reply completes.
    expect(await reply.textContent()).not.toContain("line 299");
    await page.screenshot({ path: join(screenshots(), "streaming-partial-reply.png") });

    // Scrolled to the bottom, the pane follows the reply; scrolled up, it stays where the reader put it.
    const pane = page.locator("#messages");
    const gap = () =>
      pane.evaluate((element: Scrolled) => element.scrollHeight - element.scrollTop - element.clientHeight);
    await expect.poll(gap, UI_WAIT).toBeLessThan(24);
    await pane.evaluate((element: Scrolled) => (element.scrollTop = 0));
    await reply.filter({ hasText: "line 120" }).waitFor(UI_WAIT);
    expect(await pane.evaluate((element: Scrolled) => element.scrollTop)).toBe(0);

    await page.click("#stop-turn");
    const stopped = page.locator("#messages li.llm.stopped", { hasText: "(stopped" });
    await stopped.waitFor(UI_WAIT);
    expect(await stopped.textContent()).not.toContain("line 299");
    // A stop is the user's choice: said as such, in the neutral colour, not as a red error.
    const notice = page.locator("#turn-error.stopped", { hasText: "Stopped" });
    await notice.waitFor(UI_WAIT);
    expect(await page.locator("#turn-error.error").count()).toBe(0);
    expect(await colorOf(notice)).toBe(MUTED);
    const id = (await page.textContent("#session-id")) as string;
    const llm = (await served.store.db.loadNodes(id)).find((node) => node.role === "llm");
    expect(llm?.metadata.status).toBe("cancelled");
    expect(await stopped.textContent()).toContain(llm?.metadata.partial_output as string);

    // A program run's model call streams into its node of the call tree.
    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "tell");
    await page.fill("#program-input", "{}");
    await page.click("#run-submit");
    await page.locator("#call-tree pre.stream", { hasText: "line 20" }).waitFor(UI_WAIT);
    await page.click("#stop-turn");
    await page.locator("#call-tree .status-cancelled").first().waitFor(UI_WAIT);
    // The tree keeps the record's word (cancelled), in the neutral colour of a stop.
    // (Polled: the tree is rebuilt as nodes arrive, and a replaced element has no style.)
    await expect.poll(() => colorOf(page.locator("#call-tree .status-cancelled").first()), UI_WAIT).toBe(MUTED);
    await page.locator("#messages li.code.stopped .outcome", { hasText: "stopped" }).waitFor(UI_WAIT);
    expect(pageErrors).toEqual([]);
  });

  it("asks for the token when the dispatcher requires one, then connects with it", async () => {
    served = await startDispatcher({ runtime: null, token: "browser-token-0123456789abcdef" });
    page = await (await launched()).newPage();
    await page.goto(served.dispatcher.url);
    await page.locator("#token-form").waitFor({ state: "visible", ...UI_WAIT });
    // The dispatcher's own reason (from GET /ws), only because it refused the token.
    await page.locator("#connection[data-state='unauthorized']", { hasText: "requires a token" }).waitFor(UI_WAIT);
    await page.fill("#token-input", "browser-token-0123456789abcdef");
    await page.click("#token-form button");
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    await page.locator("#token-form").waitFor({ state: "hidden", ...UI_WAIT });
    // A token in the URL is taken and removed from the address bar.
    await page.goto(`${served.dispatcher.url}/?token=browser-token-0123456789abcdef`);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    expect(new URL(page.url()).searchParams.has("token")).toBe(false);
  });

  it("connects through the address `serve` prints with its generated token", async () => {
    const home = mkdtempSync(join(tmpdir(), "openprogram-browser-serve-"));
    onCleanup(() => rmSync(home, { recursive: true, force: true }));
    const entries: LogEntry[] = [];
    const host: ServeProcess = {
      stdout: { write: () => true },
      exit: () => undefined,
      on: () => host,
      off: () => host,
    };
    const config = resolveServeConfig({ port: 0 }, { OPENPROGRAM_HOME: home });
    const dispatcher = await serve({ ...config, runtime: null, log: (entry) => entries.push(entry) }, host);
    onCleanup(() => dispatcher.close());
    const printed = entries.find((entry) => entry.event === "page");
    expect(String(printed?.url)).toMatch(/\/\?token=[0-9a-f]{48}$/);
    page = await (await launched()).newPage();
    await page.goto(String(printed?.url));
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    expect(await page.locator("#token-form").isVisible()).toBe(false);
    expect(new URL(page.url()).searchParams.has("token")).toBe(false);
    // Without the token the same page cannot connect, and asks for it.
    const stranger = await (await launched()).newPage();
    onCleanup(() => stranger.close());
    await stranger.goto(dispatcher.url);
    await stranger.locator("#token-form").waitFor({ state: "visible", ...UI_WAIT });
  });
});

describe("the web page continues stopped turns (issue 14)", () => {
  const planTrip = agenticFunction(
    { name: "plan_trip", doc: "Suggest a destination, ask for a style, plan the trip." },
    async ({ region }: { region: string }, { runtime }) => {
      const destination = await runtime.exec(`Suggest a destination in ${region}.`);
      const style = await askUser(`Which style of trip to ${destination}?`, { choices: ["budget", "comfort"] });
      return runtime.exec(`Plan a ${style} trip to ${destination}.`);
    },
  );
  let model: FakeOpenAIServer;
  let failing: Set<number>;
  let runtime: Runtime;
  beforeEach(async () => {
    failing = new Set();
    model = await startFakeOpenAIServer((request, index) => {
      if (failing.has(index)) return { status: 500, message: `request ${index} fails` };
      const last = request.json.messages?.at(-1)?.content ?? "";
      return last.startsWith("Suggest") ? "Lisbon" : `A plan for: ${last}`;
    });
    onCleanup(() => model.close());
    runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
  });

  async function runFromPage(): Promise<string> {
    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "plan_trip");
    await page.fill("#program-input", JSON.stringify({ region: "Portugal" }));
    await page.click("#run-submit");
    const sessionId = page.locator("#session-id");
    await expect.poll(() => sessionId.textContent(), UI_WAIT).toMatch(/^session_[0-9a-f]{10}$/);
    return (await sessionId.textContent()) as string;
  }

  it("offers Continue on a turn that failed; Continue resumes it and shows the result", async () => {
    failing.add(1);
    served = await startDispatcher({ runtime, programs: { plan_trip: planTrip } });
    await openPage();
    const id = await runFromPage();
    await page.locator("#question-dialog").getByRole("button", { name: "comfort" }).click();
    const failure = page.locator("#turn-error.error", { hasText: "provider_error" });
    await failure.waitFor(UI_WAIT);
    // A failure stays red.
    expect(await colorOf(failure)).toBe(RED);
    const resume = page.locator("#resume-turn");
    await resume.waitFor({ state: "visible", ...UI_WAIT });
    expect(await resume.getAttribute("title")).toBe(
      "Continue plan_trip (failed) where it stopped; the 2 steps that finished come from the record",
    );

    await resume.click();
    await page
      .locator("#messages li.code .result", { hasText: "A plan for: Plan a comfort trip to Lisbon." })
      .waitFor(UI_WAIT);
    await resume.waitFor({ state: "hidden", ...UI_WAIT });
    // Shown once: under the continued call, nowhere else.
    expect((await page.locator("body").innerText()).split("A plan for: Plan a comfort trip").length - 1).toBe(1);
    // The suggestion was replayed from the record; the failed request went again, once.
    const bodies = model.requests.map((request) => request.body);
    expect(bodies).toHaveLength(3);
    expect(bodies[2]).toBe(bodies[1]);
    const tops = (await served.store.db.loadNodes(id)).filter((node) => node.name === "plan_trip");
    expect(tops.map((node) => node.metadata.status)).toEqual(["failed", "completed"]);
    expect(pageErrors).toEqual([]);
  });

  it("shows a question still waiting after the dispatcher restarted; answering it resumes the turn and shows the result", async () => {
    const store = createTempStore("openprogram-browser-restart-");
    onCleanup(() => store.cleanup());
    served = await startDispatcher({ runtime, programs: { plan_trip: planTrip }, store });
    await openPage();
    const id = await runFromPage();
    const dialog = page.locator("#question-dialog");
    await dialog.locator("#question-text", { hasText: "Which style of trip to Lisbon?" }).waitFor(UI_WAIT);

    // Stopped while the question waits, started again on the same port and store: the page reconnects by itself.
    const { port } = served.dispatcher;
    await served.dispatcher.close();
    await page.locator("#connection[data-state='reconnecting']").waitFor(UI_WAIT);
    const restarted = await createDispatcher({ runtime, programs: { plan_trip: planTrip }, db: store.db, port });
    onCleanup(() => restarted.close());
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    // A page opened after the restart knows nothing of the question but what the dispatcher finds on disk.
    await page.close();
    await openPage(`/?session=${id}`);
    const shown = page.locator("#question-dialog");
    await shown.locator("#question-text", { hasText: "Which style of trip to Lisbon?" }).waitFor(UI_WAIT);
    await expect.poll(() => shown.getAttribute("open"), UI_WAIT).not.toBeNull();
    expect(await page.locator("#resume-turn").isVisible()).toBe(false);

    await shown.getByRole("button", { name: "budget" }).click();
    await page
      .locator("#messages li.code .result", { hasText: "A plan for: Plan a budget trip to Lisbon." })
      .waitFor(UI_WAIT);
    await expect.poll(() => shown.getAttribute("open"), UI_WAIT).toBeNull();
    await page
      .locator("#call-tree li", { hasText: "ask_user: Which style" })
      .locator(".status-answered")
      .waitFor(UI_WAIT);
    expect(model.requests).toHaveLength(2);
    const asks = (await store.db.loadNodes(id)).filter((node) => node.name === "ask_user");
    expect(asks.map((node) => [node.metadata.status, node.output])).toEqual([["answered", "budget"]]);
    expect(pageErrors).toEqual([]);
  });
});

describe("the run form from a program's input schema (issue 17 §2)", () => {
  const planDay = agenticFunction(
    {
      name: "plan_day",
      doc: "Plan a day out.",
      input: z.object({
        town: z.string().min(1).describe("where to go"),
        mood: z.enum(["calm", "lively"]),
        hours: z.number().default(8),
      }),
    },
    async ({ town, mood, hours }) => `${hours} ${mood} hours in ${town}`,
  );

  it("shows one field per property, runs with what they hold (defaults from the schema), and keeps the JSON box", async () => {
    const { runtime } = scriptedRuntime([]);
    served = await startDispatcher({ runtime, programs: { plan_day: planDay } });
    await openPage();
    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "plan_day");
    const fields = page.locator("#program-fields");
    await fields.locator("input[name='town']").waitFor(UI_WAIT);
    expect(await fields.locator("label > span").allTextContents()).toEqual(["town *", "mood *", "hours"]);
    expect(await page.getAttribute("#program-json", "open")).toBeNull();
    await fields.locator("input[name='town']").fill("Lyon");
    await fields.locator("select[name='mood']").selectOption('"lively"');
    await page.click("#run-submit");
    await page.locator("#messages li.code .result", { hasText: "8 lively hours in Lyon" }).waitFor(UI_WAIT);

    // The JSON box still works, and the dispatcher refuses what the schema refuses, naming the field.
    await page.click("#program-json summary");
    await page.fill("#program-input", JSON.stringify({ town: "Lyon" }));
    await page.click("#run-submit");
    await page.locator("#run-error", { hasText: "plan_day: input.mood: Invalid option" }).waitFor(UI_WAIT);
    await page.screenshot({ path: join(screenshots(), "run-form-from-schema.png") });
    expect(pageErrors).toEqual([]);
  });
});

describe("seeing what the model saw (issue 17 §3)", () => {
  it("an llm node of the tree opens to the request it sent and the reply; the tree shows a question's answer", async () => {
    const { runtime } = scriptedRuntime([
      { reply: "Blue is the color of the sky.", usage: { inputTokens: 120, outputTokens: 8 } },
      "A later reply.",
    ]);
    served = await startDispatcher({ runtime, programs: { pick_color: pickColor } });
    const client = await served.connect();
    client.send({ type: "run", program: "pick_color", input: {} });
    const question = await client.next("question");
    client.send({ type: "answer", question_id: question.question_id, value: "blue" });
    const done = await client.next("turn_done");
    await openPage(`/?session=${done.session_id}`);
    const tree = page.locator("#call-tree");
    await tree.locator(".name", { hasText: "ask_user: Which color? → blue" }).waitFor(UI_WAIT);
    const request = tree.locator("details.model-call");
    await request.locator("summary").click();
    await request.locator(".call-system pre", { hasText: "Ask the user for a favourite color" }).waitFor(UI_WAIT);
    expect(await request.locator(".call-user pre").last().textContent()).toBe("Describe blue.");
    expect(await request.locator(".call-reply pre").textContent()).toBe("Blue is the color of the sky.");
    expect(await request.locator(".call-footer").textContent()).toContain("the exact request sent");
    // The session's usage, and the turn's, with why there is no cost.
    const usage = page.locator("#usage");
    await usage.locator(".usage-total", { hasText: "Session: 1 call, 120 in (0 cached), 8 out" }).waitFor(UI_WAIT);
    expect(await usage.locator(".usage-turns li").allTextContents()).toEqual([
      expect.stringMatching(/^call pick_color: 1 call, 120 in \(0 cached\), 8 out, no cost \(no price: scripted\)$/),
    ]);
    await page.screenshot({ path: join(screenshots(), "what-the-model-saw.png") });
    // A later turn rebuilds the tree: the open request stays open and filled.
    await page.fill("#chat-input", "One more thing");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "A later reply." }).waitFor(UI_WAIT);
    expect(await request.first().getAttribute("open")).not.toBeNull();
    expect(await request.first().locator(".call-reply pre").textContent()).toBe("Blue is the color of the sky.");
    expect(pageErrors).toEqual([]);
  });
});

describe("compaction on the page (issue 16)", () => {
  const PYTHON_SESSIONS_V2 = fileURLToPath(
    new URL("../../session-context/test/fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url),
  );

  it("folds the turns Python's summary covers behind one block that opens to them; Compact writes a new one", async () => {
    const store = createTempStore("openprogram-browser-compacted-", { from: PYTHON_SESSIONS_V2 });
    const { runtime } = scriptedRuntime(["The user drafted notes for chapters one to four."], "scripted", {
      keepRecentTokens: 30,
    });
    served = await startDispatcher({ runtime, store });
    await openPage("/?session=compacted_shared");
    const messages = page.locator("#messages");
    const block = messages.locator(":scope > li.summary");
    await block.waitFor(UI_WAIT);
    expect(await block.locator("summary").textContent()).toBe("Summary of 6 earlier messages");
    expect(await block.locator(".summary-text").textContent()).toBe(
      "The user drafted notes for chapters one to three.",
    );
    // The block stands first, then the kept tail; the covered turns are inside it, closed.
    expect(await messages.locator(":scope > li").count()).toBe(5);
    expect(await block.locator("ol.covered > li").first().isVisible()).toBe(false);
    await block.locator("summary").click();
    expect(await block.locator("ol.covered > li").count()).toBe(6);
    expect(await block.locator("ol.covered > li").first().textContent()).toContain("Draft notes for chapter one");
    await page.screenshot({ path: join(screenshots(), "compaction-summary-block.png") });

    await page.locator("#compact-session").click();
    await page.locator("#session-note", { hasText: "stands for 8 earlier nodes" }).waitFor(UI_WAIT);
    await messages
      .locator(":scope > li.summary summary", { hasText: "Summary of 8 earlier messages" })
      .waitFor(UI_WAIT);
    expect(await messages.locator(":scope > li").count()).toBe(3);
    expect(pageErrors).toEqual([]);
  });
});

describe("a web page that tells the truth (issue 17 §6)", () => {
  it("says 'disconnected, reconnecting' when the dispatcher is killed -9 (no token form), reconnects when it is back on the same port, and the pending question comes back", async () => {
    const home = mkdtempSync(join(tmpdir(), "openprogram-browser-kill-"));
    onCleanup(() => rmSync(home, { recursive: true, force: true }));
    const env = { OPENPROGRAM_PROVIDER: "none", OPENPROGRAM_TOKEN: KILL_TOKEN };
    const first = await serveInChild(SERVE_CHILD, env, home);
    const wsUrl = new URL(first.wsUrl);
    page = await (await launched()).newPage();
    pageErrors = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    await page.goto(`http://${wsUrl.host}/?token=${KILL_TOKEN}`);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "choose_color");
    await page.click("#run-submit");
    const dialog = page.locator("#question-dialog");
    await dialog.locator("#question-text", { hasText: "Which color?" }).waitFor(UI_WAIT);
    const sessionId = page.locator("#session-id");
    await expect.poll(() => sessionId.textContent(), UI_WAIT).toMatch(/^session_[0-9a-f]{10}$/);
    const id = (await sessionId.textContent()) as string;

    first.child.kill("SIGKILL");
    await first.exited;
    const connection = page.locator("#connection[data-state='reconnecting']");
    await connection.waitFor(UI_WAIT);
    expect(await connection.textContent()).toBe("disconnected, reconnecting…");
    // Let a few attempts fail (each probes GET /ws, which finds nobody): still no word of a token.
    await page.waitForTimeout(1_500);
    expect(await page.locator("#token-form").isVisible()).toBe(false);
    expect(await page.textContent("#connection")).toBe("disconnected, reconnecting…");
    // Nothing can be answered meanwhile: the dialog waits for the dispatcher to ask again.
    expect(await dialog.getAttribute("open")).toBeNull();
    await page.screenshot({ path: join(screenshots(), "reconnecting.png") });

    // Started again on the same port and home: the page finds it by itself, with the token it kept.
    await serveInChild(SERVE_CHILD, { ...env, OPENPROGRAM_PORT: wsUrl.port }, home);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    // Resubscribed to the open session: the dispatcher sends the question again, on the same page.
    await dialog.locator("#question-text", { hasText: "Which color?" }).waitFor(UI_WAIT);
    await expect.poll(() => dialog.getAttribute("open"), UI_WAIT).not.toBeNull();
    expect(await page.textContent("#session-id")).toBe(id);
    await dialog.getByRole("button", { name: "blue" }).click();
    await page.locator("#messages li.code .result", { hasText: "You chose blue." }).waitFor(UI_WAIT);
    expect(await page.locator("#token-form").isVisible()).toBe(false);
    expect(withoutNetworkErrors(pageErrors)).toEqual([]);
  });

  it("after a dropped connection, resubscribes and shows the streaming reply's text so far", async () => {
    const lines = Array.from({ length: 160 }, (_, index) => `line ${index}\n`);
    const { runtime } = scriptedRuntime([{ chunks: lines, chunkDelayMs: 25 }]);
    served = await startDispatcher({ runtime });
    page = await (await launched()).newPage();
    pageErrors = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    // The page's WebSocket goes through Playwright, which can cut it while the dispatcher stays up.
    const cuts: Array<() => Promise<void>> = [];
    await page.routeWebSocket(/\/ws/, (socket) => {
      const server = socket.connectToServer();
      cuts.push(async () => {
        await server.close({ code: 1001, reason: "gone" });
        await socket.close({ code: 1001, reason: "network dropped" });
      });
    });
    await page.goto(served.dispatcher.url);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    await page.fill("#chat-input", "Tell me a long story");
    await page.click("#chat-send");
    const reply = page.locator("#messages li.llm.streaming");
    await reply.filter({ hasText: "line 20" }).waitFor(UI_WAIT);

    await (cuts.at(-1) as () => Promise<void>)();
    await page.locator("#connection[data-state='reconnecting']").waitFor(UI_WAIT);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    expect(cuts).toHaveLength(2);
    // The page forgot the streamed text on reconnecting; the dispatcher sent it again from the start.
    await reply.filter({ hasText: "line 60" }).waitFor(UI_WAIT);
    expect(await reply.textContent()).toContain("line 0\nline 1\n");
    const done = page.locator("#messages li.llm:not(.streaming)", { hasText: "line 159" });
    await done.waitFor(UI_WAIT);
    expect(((await done.textContent()) ?? "").match(/line 0\n/g)).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });

  it("shows each result once and formatted, renders Markdown without injecting HTML, keeps titles and the chat box, and searches sessions", async () => {
    const markdown = [
      "# Your week",
      "",
      "- **Monday**: `rest`",
      "- Tuesday: see [the map](https://example.com/map)",
      '<img src="x" onerror="window.__pwned = 1">',
      "<script>window.__pwned = 2</script>",
      "[click me](javascript:window.__pwned=3)",
    ].join("\n");
    const stats = agenticFunction({ name: "stats", doc: "Count the days." }, async (_: unknown) => ({
      town: "Lyon",
      days: [1, 2],
    }));
    const { runtime } = scriptedRuntime([markdown, "Second answer", "Third answer", "Buy bread."]);
    served = await startDispatcher({ runtime, programs: { stats } });
    await openPage();
    const conversation = page.locator(".conversation");
    const form = page.locator("#chat-form");
    const before = await boxOf(form);
    const pane = await boxOf(conversation);
    expect(pane.bottom - before.bottom).toBeLessThan(20);

    await page.fill("#chat-input", "Plan my week\nwith some detail");
    await page.click("#chat-send");
    const rendered = page.locator("#messages li.llm .markdown");
    await rendered.waitFor(UI_WAIT);
    expect(await rendered.locator("h3").textContent()).toBe("Your week");
    expect(await rendered.locator("li strong").textContent()).toBe("Monday");
    expect(await rendered.locator("li code").textContent()).toBe("rest");
    expect(await rendered.locator("a").count()).toBe(1);
    expect(await rendered.locator("a").getAttribute("href")).toBe("https://example.com/map");
    // The markup a reply carries is shown as text: no element, no script run, no javascript: link.
    expect(await page.locator("#messages img, #messages script").count()).toBe(0);
    expect(await rendered.textContent()).toContain('<img src="x" onerror="window.__pwned = 1">');
    expect(await rendered.textContent()).toContain("click me (javascript:window.__pwned=3)");
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    await page.screenshot({ path: join(screenshots(), "markdown-reply.png") });

    for (const [text, answer] of [
      ["And Tuesday?", "Second answer"],
      ["And Friday?", "Third answer"],
    ] as const) {
      await page.fill("#chat-input", text);
      await page.click("#chat-send");
      await page.locator("#messages li.llm", { hasText: answer }).waitFor(UI_WAIT);
    }
    // The title is the first message's first line, whatever came after; the preview follows.
    const item = page.locator("#session-list li").first();
    await item.locator(".preview", { hasText: "And Friday?" }).waitFor(UI_WAIT);
    expect(await item.locator(".title").textContent()).toBe("Plan my week");

    // A program's result once, in the conversation, pretty-printed.
    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "stats");
    await page.fill("#program-input", "{}");
    await page.click("#run-submit");
    const result = page.locator("#messages li.code .result pre.json");
    await result.waitFor(UI_WAIT);
    expect(await result.textContent()).toBe(JSON.stringify({ town: "Lyon", days: [1, 2] }, null, 2));
    const shown = (await page.locator("body").innerText()).match(/Lyon/g) ?? [];
    expect(shown).toHaveLength(1);
    await page.click("#run-panel summary");

    // The conversation followed to the result: it is in view, above the chat box.
    await expect
      .poll(async () => (await boxOf(result)).bottom - (await boxOf(page.locator("#messages"))).bottom, UI_WAIT)
      .toBeLessThanOrEqual(1);
    // The chat box stayed at the bottom of the conversation while it grew.
    const after = await boxOf(form);
    expect(Math.abs(after.bottom - before.bottom)).toBeLessThan(2);
    expect(pane.bottom - after.bottom).toBeLessThan(20);
    await page.screenshot({ path: join(screenshots(), "results-once-chat-at-bottom.png") });

    await page.click("#new-session");
    await page.fill("#chat-input", "Groceries for Sunday");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "Buy bread." }).waitFor(UI_WAIT);
    const titles = page.locator("#session-list li .title");
    await expect.poll(() => titles.count(), UI_WAIT).toBe(2);
    const search = page.locator("#session-search");
    await search.fill("WEEK");
    expect(await titles.allTextContents()).toEqual(["Plan my week"]);
    await search.fill("sunday");
    expect(await titles.allTextContents()).toEqual(["Groceries for Sunday"]);
    // Previews are searched too (the first session's is now its latest entry, the program run).
    await search.fill("stats(");
    expect(await titles.allTextContents()).toEqual(["Plan my week"]);
    await search.fill("nothing like this");
    expect(await titles.count()).toBe(0);
    expect(await page.locator("#session-none").isVisible()).toBe(true);
    await search.fill("");
    expect(await titles.count()).toBe(2);
    expect(pageErrors).toEqual([]);
  });

  it("at 375 px shows the conversation first and the session list behind a button", async () => {
    const { runtime } = scriptedRuntime(["Hello from the model"]);
    served = await startDispatcher({ runtime });
    const client = await served.connect();
    client.send({ type: "chat", text: "Hi there" });
    const id = (await client.next("session")).session_id;
    await client.next("turn_done");
    await openPage(`/?session=${id}`);
    await page.setViewportSize({ width: 375, height: 740 });
    await page.locator("#messages li.llm", { hasText: "Hello from the model" }).waitFor(UI_WAIT);
    expect(await page.locator("#session-list").isVisible()).toBe(false);
    const conversation = await boxOf(page.locator(".conversation"));
    expect(conversation.top).toBeLessThan(120);
    // The chat box is on the first screen.
    expect((await boxOf(page.locator("#chat-form"))).bottom).toBeLessThanOrEqual(740);
    await page.screenshot({ path: join(screenshots(), "narrow-conversation.png") });

    await page.click("#show-sessions");
    await page.locator("#session-list li", { hasText: "Hi there" }).waitFor({ state: "visible", ...UI_WAIT });
    expect(await page.getAttribute("#show-sessions", "aria-expanded")).toBe("true");
    await page.screenshot({ path: join(screenshots(), "narrow-session-list.png") });
    await page.locator("#session-list li", { hasText: "Hi there" }).click();
    await page.locator("#session-list").waitFor({ state: "hidden", ...UI_WAIT });
    expect(await page.textContent("#session-id")).toBe(id);
    expect(pageErrors).toEqual([]);
  });
});

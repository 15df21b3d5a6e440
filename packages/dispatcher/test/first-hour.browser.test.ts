// Issue 37 on the page, in Chromium: a failed session explains itself (the error and where in the program, in the
// call tree, the conversation and under the session bar; no Continue for an error the program raised itself), no
// branch appears that the user did not make (after a resume and after an answer), and the token form leaves the
// chat box on the first screen at 1280 and at 375 pixels.
import { join } from "node:path";
import { agenticFunction, askUser, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { listBranches } from "@openprogram/session-context/store";
import { createTempStore, startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDispatcher } from "../src/index.js";
import { launchChromium, screenshots, UI_WAIT } from "./browser-kit.js";
import { closeAll, onCleanup, startDispatcher, type TestDispatcher } from "./helpers.js";

let browser: Browser | undefined;
let served: TestDispatcher;
let page: Page;
let pageErrors: string[];

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

async function openPage(path = "/", viewport = { width: 1280, height: 800 }): Promise<Page> {
  page = await (await launched()).newPage({ viewport });
  pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
  await page.goto(`${served.dispatcher.url}${path}`);
  return page;
}

async function runFromPage(program: string, input: unknown): Promise<string> {
  await page.click("#run-panel summary");
  await page.selectOption("#program-select", program);
  await page.fill("#program-input", JSON.stringify(input));
  await page.click("#run-submit");
  const sessionId = page.locator("#session-id");
  await expect.poll(() => sessionId.textContent(), UI_WAIT).toMatch(/^session_[0-9a-f]{10}$/);
  return (await sessionId.textContent()) as string;
}

function checkMonth(month: string): void {
  if (month !== "May") throw new RangeError(`no trips in ${month}`);
}
const buggyTrip = agenticFunction({ name: "plan_trip", doc: "Plan a trip." }, async ({ month }: { month: string }) => {
  checkMonth(month);
  return month;
});

describe("a failed session on the page", () => {
  it("says the error and where it came from, in the tree, the conversation and under the session bar; offers no Continue", async () => {
    served = await startDispatcher({ runtime: null, programs: { plan_trip: buggyTrip } });
    await openPage();
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    const id = await runFromPage("plan_trip", { month: "August" });
    // A fresh session's address is already in the URL: no "reload with ?session=" note.
    expect(new URL(page.url()).searchParams.get("session")).toBe(id);
    expect(await page.locator("#session-note").isVisible()).toBe(false);

    for (const reloaded of [false, true]) {
      if (reloaded) {
        await page.close();
        await openPage(`/?session=${id}`);
      }
      const header = page.locator("#session-failure");
      await header.waitFor({ state: "visible", ...UI_WAIT });
      expect(await header.textContent()).toMatch(
        /^failed in plan_trip: error \[RangeError\]: no trips in August\n {2}at checkMonth \(.*first-hour\.browser\.test\.ts:\d+:\d+\)/,
      );
      const tree = page.locator("#call-tree li", { hasText: "plan_trip" }).locator("pre.failure");
      await tree.waitFor(UI_WAIT);
      expect(await tree.textContent()).toContain("error [RangeError]: no trips in August\n  at checkMonth (");
      expect(await page.locator("#messages li.code pre.failure").textContent()).toContain(
        "error [RangeError]: no trips in August",
      );
      // Resuming would replay the same failure from the record: the page says to fix the program instead.
      await page.locator("#resume-advice").waitFor({ state: "visible", ...UI_WAIT });
      expect(await page.locator("#resume-turn").isVisible()).toBe(false);
    }
    await page.screenshot({ path: join(screenshots(), "failed-session.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});

describe("no branch the user did not make", () => {
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
      return last.startsWith("Suggest") ? "Lisbon" : `A plan for: ${last.split("\n")[0]}`;
    });
    onCleanup(() => model.close());
    runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
  });

  it("a chat message, a run resumed with Continue, a run answered after a restart: one branch, no switcher", async () => {
    const store = createTempStore("openprogram-browser-one-branch-");
    onCleanup(() => store.cleanup());
    served = await startDispatcher({ runtime, programs: { plan_trip: planTrip }, store });
    await openPage();
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    await page.fill("#chat-input", "Hello");
    await page.click("#chat-send");
    await page.locator("#messages li.llm", { hasText: "A plan for: Hello" }).waitFor(UI_WAIT);
    const id = (await page.locator("#session-id").textContent()) as string;

    // A run after the chat message, failing at its last model call; Continue resumes it.
    failing.add(model.requests.length + 1);
    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "plan_trip");
    await page.fill("#program-input", JSON.stringify({ region: "Portugal" }));
    await page.click("#run-submit");
    await page.locator("#question-dialog").getByRole("button", { name: "comfort" }).click();
    const resume = page.locator("#resume-turn");
    await resume.waitFor({ state: "visible", ...UI_WAIT });
    expect(await resume.getAttribute("title")).toBe(
      "Continue plan_trip (failed) where it stopped; the 2 steps that finished come from the record",
    );
    await resume.click();
    await page.locator("#messages li.code .result", { hasText: "comfort trip" }).waitFor(UI_WAIT);

    // Another run, stopped at its question by a restart; answered on the page after it.
    await page.click("#run-submit");
    await page.locator("#question-text", { hasText: "Which style of trip to Lisbon?" }).waitFor(UI_WAIT);
    const { port } = served.dispatcher;
    await served.dispatcher.close();
    const restarted = await createDispatcher({ runtime, programs: { plan_trip: planTrip }, db: store.db, port });
    onCleanup(() => restarted.close());
    await page.close();
    await openPage(`/?session=${id}`);
    await page.locator("#question-dialog").getByRole("button", { name: "budget" }).click();
    await page.locator("#messages li.code .result", { hasText: "budget trip" }).waitFor(UI_WAIT);

    expect((await listBranches(id, { db: store.db })).length).toBe(1);
    await page.reload();
    await page.locator("#messages li.code .result", { hasText: "budget trip" }).waitFor(UI_WAIT);
    expect(await page.locator(".branch-switcher").isVisible()).toBe(false);
    // Every turn is on the one branch the page shows: the chat reply and both runs' results.
    expect(await page.locator("#messages li").count()).toBeGreaterThanOrEqual(5);
    expect(await page.locator("#messages li.code .result", { hasText: "comfort trip" }).count()).toBe(1);
    expect(pageErrors.filter((error) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(error))).toEqual([]);
  });
});

describe("the token form", () => {
  it.each([
    [1280, 800],
    [375, 740],
  ])("at %i px leaves the chat box and its Send button on the first screen", async (width, height) => {
    served = await startDispatcher({ runtime: null, token: "browser-token-0123456789abcdef" });
    await openPage("/", { width, height });
    await page.locator("#token-form").waitFor({ state: "visible", ...UI_WAIT });
    for (const selector of ["#chat-send", "#chat-input", "#token-form button", "#token-input"]) {
      const box = await page.locator(selector).boundingBox();
      expect(box, selector).not.toBeNull();
      expect(box!.y + box!.height, selector).toBeLessThanOrEqual(height);
      expect(box!.x + box!.width, selector).toBeLessThanOrEqual(width);
      expect(box!.x, selector).toBeGreaterThanOrEqual(0);
    }
    await page.screenshot({ path: join(screenshots(), `token-form-${width}.png`) });
    await page.fill("#token-input", "browser-token-0123456789abcdef");
    await page.click("#token-form button");
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    await page.locator("#token-form").waitFor({ state: "hidden", ...UI_WAIT });
    const send = await page.locator("#chat-send").boundingBox();
    expect(send!.y + send!.height).toBeLessThanOrEqual(height);
  });
});

describe("the small things on the page", () => {
  it("a program's streaming model call shows in the conversation too; archived sessions are listed on request", async () => {
    const model = await startFakeOpenAIServer(() => ({
      chunks: ["Tide ", "pools ", "are ", "tiny ", "cities."],
      chunkDelayMs: 400,
    }));
    onCleanup(() => model.close());
    const runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    const opening = agenticFunction(
      { name: "write_opening", doc: "Write the opening." },
      async ({ topic }: { topic: string }, { runtime: model }) => model.exec(`Topic: ${topic}`),
    );
    served = await startDispatcher({ runtime, programs: { write_opening: opening } });
    const client = await served.connect();
    client.send({ type: "chat", text: "an archived chat" });
    const archived = (await client.next("session")).session_id;
    await client.next("turn_done");
    client.send({ type: "archive_session", session_id: archived, archived: true });
    await client.next("session_archived");

    await openPage();
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    await runFromPage("write_opening", { topic: "tide pools" });
    // While the reply streams: its text under the call in the conversation, not only in the call tree.
    await page.locator("#messages li.code pre.stream", { hasText: "Tide pools" }).waitFor(UI_WAIT);
    await page.locator("#messages li.code .result", { hasText: "Tide pools are tiny cities." }).waitFor(UI_WAIT);

    const listed = page.locator("#session-list li", { hasText: "an archived chat" });
    expect(await listed.count()).toBe(0);
    await page.check("#show-archived");
    await listed.locator(".meta", { hasText: "archived" }).waitFor(UI_WAIT);
    await page.uncheck("#show-archived");
    await listed.waitFor({ state: "detached", ...UI_WAIT });
    expect(pageErrors).toEqual([]);
  });
});

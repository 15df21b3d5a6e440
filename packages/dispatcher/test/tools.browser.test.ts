// Tool calls on the web page, in Chromium (issue 32): the approval question
// answered from the page, the "approve every tool call" setting of a run, and
// the call tree's tool nodes with their arguments and results.
import { join } from "node:path";
import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer } from "@openprogram/session-context/testing";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshots, UI_WAIT } from "./browser-kit.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { closeAll, onCleanup, startDispatcher } from "./helpers.js";
import { planDay, toolModel } from "./tool-program.js";

let browser: Browser | undefined;
let page: Page | undefined;
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await page?.close();
  await closeAll();
});

describe("tool calls on the web page, in Chromium", () => {
  it("asks for approval on the page, shows tool nodes with arguments and results, and approves all when set", async () => {
    const model = await startFakeOpenAIServer(toolModel);
    onCleanup(() => model.close());
    const runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    const served = await startDispatcher({ runtime, programs: { plan_day: planDay } });
    browser ??= await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(served.dispatcher.url);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);

    await page.click("#run-panel summary");
    await page.selectOption("#program-select", "plan_day");
    await page.click("#run-submit");
    const dialog = page.locator("#question-dialog");
    await dialog
      .locator("#question-text", { hasText: 'Allow the tool book_table to run with {"place":"Fjord"}?' })
      .waitFor(UI_WAIT);
    await dialog.getByRole("button", { name: "yes" }).click();
    await page.locator("#messages li.code .result", { hasText: "booked Fjord" }).waitFor(UI_WAIT);
    const sessionId = (await page.locator("#session-id").textContent()) as string;

    // The call tree: each tool call under the reply that asked for it, its arguments and its result.
    const tree = page.locator("#call-tree");
    const weather = tree.locator("li", { has: page.locator(":scope > .call .name", { hasText: /^weather$/ }) });
    await weather.locator(".tool-result", { hasText: "snow" }).waitFor(UI_WAIT);
    expect(await weather.locator(":scope > .call .role").textContent()).toBe("tool");
    expect(await weather.locator(".tool-arguments").textContent()).toContain('"city": "Oslo"');
    const booking = tree.locator("li", { has: page.locator(":scope > .call .name", { hasText: /^book_table$/ }) });
    expect(await booking.locator(".tool-result").textContent()).toContain("booked Fjord");
    // The tool nodes sit under the llm node that asked for them.
    const llmId = await weather.locator("xpath=ancestor::li[1]").getAttribute("data-node-id");
    const nodes = await served.store.db.loadNodes(sessionId);
    expect(nodes.find((node) => node.id === llmId)?.role).toBe("llm");
    await page.screenshot({ path: join(screenshots(), "tool-calls.png"), fullPage: true });

    // "Approve every tool call of this run": the next run asks nothing.
    await page.check("#approve-tools");
    await page.click("#run-submit");
    await expect
      .poll(
        async () => (await served.store.db.loadNodes(sessionId)).filter((node) => node.name === "plan_day").length,
        UI_WAIT,
      )
      .toBe(2);
    await page.locator("#messages li.code .result", { hasText: "booked Fjord" }).nth(1).waitFor(UI_WAIT);
    const asked = (await served.store.db.loadNodes(sessionId)).filter((node) => node.name === "ask_user");
    expect(asked.map((node) => node.output)).toEqual(["yes"]);
    expect(await dialog.isVisible()).toBe(false);
    // An approval is a question inside the run, not a turn of the conversation: no branch appears.
    expect(await page.locator(".branch-switcher").isVisible()).toBe(false);
    await page.screenshot({ path: join(screenshots(), "tool-calls-approved.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});

// Budgets on the web page, in Chromium (issue 36): one bar per configured budget with what was spent against it,
// updated after each turn, and the budget that stopped a turn named.
import { join } from "node:path";
import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer } from "@openprogram/session-context/testing";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshots, UI_WAIT } from "./browser-kit.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { closeAll, onCleanup, startDispatcher } from "./helpers.js";

let browser: Browser | undefined;
let page: Page | undefined;
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await page?.close();
  await closeAll();
});

/** The bar of one budget: its figures' text and its meter's value and maximum (null without a meter). */
async function barOf(scope: string, dimension: string) {
  const item = (page as Page).locator(`#budget-list li.budget[data-scope='${scope}'][data-dimension='${dimension}']`);
  const meter = item.locator("meter");
  return {
    figures: await item.locator(".budget-figures").textContent(),
    meter: (await meter.count())
      ? {
          value: await meter.evaluate((m) => (m as unknown as { value: number }).value),
          max: await meter.evaluate((m) => (m as unknown as { max: number }).max),
        }
      : null,
    stopped: (await item.getAttribute("class"))?.split(" ").includes("stopped") ?? false,
  };
}

describe("budgets on the web page, in Chromium", () => {
  it("shows a bar per budget, updates it after each turn, and names the budget that stopped a turn", async () => {
    // Every reply reports 600 tokens in and 0 out.
    const model = await startFakeOpenAIServer(() => ({ chunks: ["Noted."], usage: { input: 600, output: 0 } }));
    onCleanup(() => model.close());
    const runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    const served = await startDispatcher({
      runtime,
      budgets: { exec: { tokens: 50_000 }, turn: { tokens: 5000, seconds: 600 }, session: { tokens: 1000 } },
    });
    browser ??= await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(served.dispatcher.url);
    await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
    expect(await page.locator("#budgets").isVisible()).toBe(false);

    await page.fill("#chat-input", "First");
    await page.click("#chat-send");
    await page
      .locator("#budget-list li.budget[data-scope='session'] .budget-figures", {
        hasText: "600 tokens of 1,000 tokens",
      })
      .waitFor(UI_WAIT);
    expect(
      await page
        .locator("#budget-list li.budget")
        .evaluateAll((items) =>
          items.map(
            (item) =>
              (item as unknown as { dataset: Record<string, string> }).dataset.scope +
              "/" +
              (item as unknown as { dataset: Record<string, string> }).dataset.dimension,
          ),
        ),
    ).toEqual(["exec/tokens", "turn/tokens", "turn/seconds", "session/tokens"]);
    expect(await barOf("session", "tokens")).toEqual({
      figures: "600 tokens of 1,000 tokens (60%, this session)",
      meter: { value: 600, max: 1000 },
      stopped: false,
    });
    expect(await barOf("turn", "tokens")).toMatchObject({
      figures: "600 tokens of 5,000 tokens (12%, the latest turn)",
      meter: { value: 600, max: 5000 },
    });
    expect(await barOf("exec", "tokens")).toEqual({
      figures: "limit 50,000 tokens (each call to exec, its tool loop included)",
      meter: null,
      stopped: false,
    });
    expect((await barOf("turn", "seconds")).meter?.max).toBe(600);

    // The second reply takes the session past its 1,000 tokens: the turn stops, and the page says which budget did.
    await page.fill("#chat-input", "Second");
    await page.click("#chat-send");
    await page.locator("#budget-list .budget-stop").waitFor(UI_WAIT);
    expect(await barOf("session", "tokens")).toEqual({
      figures: "1,200 tokens of 1,000 tokens (120%, this session)",
      meter: { value: 1000, max: 1000 },
      stopped: true,
    });
    expect((await barOf("turn", "tokens")).stopped).toBe(false);
    expect(await page.locator("#budget-list li.budget.stopped .budget-stopped").textContent()).toBe(
      "stopped the latest turn",
    );
    expect(await page.locator("#budget-list .budget-stop").textContent()).toMatch(
      /^The session tokens budget stopped the latest turn: The session token budget is exceeded: limit 1000 tokens, spent 1200 tokens\./,
    );
    expect(model.requests).toHaveLength(2);

    // A third turn is refused before its request is sent; the page still names the session budget.
    await page.fill("#chat-input", "Third");
    await page.click("#chat-send");
    await page.locator("#turn-error", { hasText: "budget_exceeded" }).waitFor(UI_WAIT);
    await expect
      .poll(async () => (await barOf("turn", "tokens")).figures, UI_WAIT)
      .toBe("0 tokens of 5,000 tokens (0%, the latest turn)");
    expect((await barOf("session", "tokens")).stopped).toBe(true);
    expect(await page.locator("#budget-list .budget-stop").textContent()).toContain("the next model call needs up to");
    expect(model.requests).toHaveLength(2);
    await page.screenshot({ path: join(screenshots(), "budgets.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});

// A structured result on the web page, in Chromium (issue 33): a program's structured return value and its model
// call's parsed value (`exec(..., { schema })`, answered by a real HTTP server speaking the OpenAI protocol) shown as
// collapsible trees whose text is the value's JSON, operated from the keyboard, kept as toggled across redraws.
import { join } from "node:path";
import { agenticFunction, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer } from "@openprogram/session-context/testing";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshots, UI_WAIT } from "./browser-kit.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
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

const Survey = z.object({
  ideas: z.array(z.object({ title: z.string(), risk: z.enum(["low", "high"]), tags: z.array(z.string()) })),
  meta: z.object({ source: z.object({ kind: z.string(), detail: z.object({ year: z.number(), sites: z.number() }) }) }),
});
const REPLY = {
  ideas: [
    { title: "Tide pools", risk: "low", tags: ["coast", "field"] },
    { title: "Kelp forests", risk: "high", tags: [] },
  ],
  meta: { source: { kind: "survey", detail: { year: 2026, sites: 14 } } },
};
const survey = agenticFunction({ name: "survey", doc: "Survey research ideas." }, async (_: object, { runtime }) => {
  const parsed = await runtime.exec("Survey the coast.", { schema: Survey });
  return { count: parsed.ideas.length, ...parsed };
});
const RESULT = { count: 2, ...REPLY };

describe("structured results on the web page, in Chromium", () => {
  it("shows a structured result and a parsed reply as collapsible trees, usable from the keyboard", async () => {
    const model = await startFakeOpenAIServer(() => JSON.stringify(REPLY));
    onCleanup(() => model.close());
    const runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    const served = await startDispatcher({ runtime, programs: { survey } });
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
    await page.selectOption("#program-select", "survey");
    await page.fill("#program-input", "{}");
    await page.click("#run-submit");
    const result = page.locator("#messages li.code .result pre.json-tree").first();
    await result.waitFor(UI_WAIT);
    // The request asked for the schema (the provider's structured output); the reply was parsed.
    expect((model.requests[0]?.json as { response_format?: { type?: string } }).response_format?.type).toBe(
      "json_schema",
    );
    // The tree's text is the value's JSON, `…` standing for what is folded.
    const folded = JSON.stringify(RESULT, null, 2)
      .replace(/"tags": \[\n\s*"coast",\n\s*"field"\n\s*\]/, '"tags": […]')
      .replace(/"detail": \{[^}]*\}/, '"detail": {…}');
    expect(await result.textContent()).toBe(folded);
    const toggles = result.locator("button.json-toggle");
    // {root}, [ideas], {idea}, [tags], {idea} ([] empty has none), {meta}, {source}, {detail}.
    expect(await toggles.count()).toBe(8);
    // Three levels open: the tags (a fourth) and the detail start folded.
    const states = await toggles.evaluateAll((buttons) =>
      (buttons as unknown as Array<{ getAttribute(name: string): string | null }>).map((button) =>
        button.getAttribute("aria-expanded"),
      ),
    );
    expect(states).toEqual(["true", "true", "true", "false", "true", "true", "true", "false"]);
    let shown = await result.innerText();
    expect(shown).toContain('"detail": {…}');
    expect(shown).toContain('"tags": […]');
    expect(shown).not.toContain("2026");
    expect(shown).toContain('"title": "Kelp forests"');

    // From the keyboard: Tab reaches the ideas' bracket; Enter folds it, Space opens it again.
    const ideas = result.locator("button.json-toggle[aria-label='array of 2 items at $.ideas']");
    await result.locator("button.json-toggle").first().focus();
    await page.keyboard.press("Tab");
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } } }
        ).document.activeElement.getAttribute("aria-label"),
      ),
    ).toBe("array of 2 items at $.ideas");
    await page.keyboard.press("Enter");
    expect(await ideas.getAttribute("aria-expanded")).toBe("false");
    shown = await result.innerText();
    expect(shown).toContain('"ideas": […],');
    expect(shown).not.toContain("Tide pools");
    const detail = result.locator("button.json-toggle[aria-label='object of 2 keys at $.meta.source.detail']");
    await detail.focus();
    await page.keyboard.press(" ");
    expect(await result.innerText()).toContain('"year": 2026');
    await ideas.focus();
    await page.keyboard.press(" ");
    await result.locator("button.json-toggle[aria-label='array of 2 items at $.ideas[0].tags']").click();
    // Everything open: the text is exactly the JSON.
    expect(await result.textContent()).toBe(JSON.stringify(RESULT, null, 2));
    await page.screenshot({ path: join(screenshots(), "structured-result.png"), fullPage: true });

    // The model call's parsed value, in the call tree, as a tree too.
    const parsed = page.locator("#call-tree .parsed-output pre.json-tree");
    await parsed.waitFor(UI_WAIT);
    const closed = parsed.locator("button.json-toggle[aria-expanded='false']");
    while ((await closed.count()) > 0) await closed.first().click();
    expect(await parsed.textContent()).toBe(JSON.stringify(REPLY, null, 2));

    // A redraw (the page rebuilds on every frame: run again) keeps what the reader folded and opened.
    await ideas.click();
    await page.click("#run-submit");
    await page.locator("#messages li.code .result pre.json-tree").nth(1).waitFor(UI_WAIT);
    expect(await ideas.getAttribute("aria-expanded")).toBe("false");
    expect(await detail.getAttribute("aria-expanded")).toBe("true");
    const second = page.locator("#messages li.code .result pre.json-tree").nth(1);
    expect(
      await second
        .locator("button.json-toggle[aria-label='array of 2 items at $.ideas']")
        .getAttribute("aria-expanded"),
    ).toBe("true");
    expect(errors).toEqual([]);
  });
});

// The branch switcher and edit and resend on the web page, in Chromium, over a
// session Python OpenProgram wrote (branched_shared): the page shows the head's
// branch only (conversation and call tree), switches branches, edits a past
// message onto a new branch (the edit surviving a redraw), and archives.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTempStore, scriptedRuntime } from "@openprogram/session-context/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { launchChromium, screenshots, UI_WAIT } from "./browser-kit.js";
import { closeAll, startDispatcher } from "./helpers.js";

const V2_FIXTURE = fileURLToPath(
  new URL("../../session-context/test/fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url),
);

let browser: Browser | undefined;
let page: Page | undefined;
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await page?.close();
  await closeAll();
});

describe("branches on the web page, in Chromium", () => {
  it("shows the head's branch, switches branches, and edits a past message onto a new branch", async () => {
    const store = createTempStore("openprogram-branches-browser-", { from: V2_FIXTURE });
    const served = await startDispatcher({ store, runtime: scriptedRuntime(["Marrakesh."]).runtime });
    browser ??= await launchChromium();
    page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    const meta = (): { head_id: string } =>
      JSON.parse(readFileSync(join(store.root, "branched_shared", "meta.json"), "utf8")) as { head_id: string };

    await page.goto(`${served.dispatcher.url}/?session=branched_shared`);
    const messages = page.locator("#messages");
    await messages.locator("li.llm", { hasText: "Seville." }).waitFor(UI_WAIT);
    // The head's branch only: the other branch's turns are a switch away.
    await expect.poll(() => messages.locator("li", { hasText: "Somewhere colder" }).count(), UI_WAIT).toBe(0);
    const switcher = page.locator("#branch-select");
    await switcher.waitFor({ state: "visible", ...UI_WAIT });
    expect(await switcher.locator("option").allTextContents()).toEqual(["“Somewhere colder” (ba1sha)", "● warmer"]);
    // The call tree shows the head's branch too: the other branch's nodes are not in it.
    const tree = page.locator("#call-tree");
    await tree.locator('li[data-node-id="ba1bsha"]').waitFor(UI_WAIT);
    expect(await tree.locator('li[data-node-id="ba1sha"], li[data-node-id="bu1sha"]').count()).toBe(0);
    const treeIds = await Promise.all(
      (await tree.locator("li").all()).map((item) => item.getAttribute("data-node-id")),
    );
    expect(treeIds).toEqual(["bu0sha", "ba0sha", "bu1bsha", "ba1bsha"]);

    await switcher.selectOption("ba1sha");
    await messages.locator("li.llm", { hasText: "Oslo." }).waitFor(UI_WAIT);
    await expect.poll(() => messages.locator("li", { hasText: "Somewhere warmer" }).count(), UI_WAIT).toBe(0);
    await expect.poll(() => meta().head_id, UI_WAIT).toBe("ba1sha");
    await tree.locator('li[data-node-id="ba1sha"]').waitFor(UI_WAIT);
    expect(await tree.locator('li[data-node-id="ba1bsha"], li[data-node-id="bu1bsha"]').count()).toBe(0);

    // Edit and resend "Somewhere colder": a new branch beside it, the head on it, the old branch kept.
    const colder = messages.locator("li.user", { hasText: "Somewhere colder" });
    await colder.locator("button.edit-message").click();
    const form = messages.locator("form.edit-form");
    expect(await form.locator("textarea").inputValue()).toBe("Somewhere colder");
    await form.locator("textarea").fill("Somewhere hotte");
    // A frame arrives while the edit is being typed (another client names a branch): the page redraws, the text stays.
    const other = await served.connect({ headers: { origin: served.dispatcher.url } });
    other.send({ type: "name_branch", session_id: "branched_shared", head_id: "ba1bsha", name: "warmer still" });
    await expect
      .poll(() => switcher.locator("option").allTextContents(), UI_WAIT)
      .toEqual(["warmer still", "● “Somewhere colder” (ba1sha)"]); // a name just given is the newest
    expect(await form.locator("textarea").inputValue()).toBe("Somewhere hotte");
    // Still focused, the caret where it was: typing goes on.
    await page.keyboard.type("r");
    expect(await form.locator("textarea").inputValue()).toBe("Somewhere hotter");
    await form.locator("button[type=submit]").click();
    await messages.locator("li.llm", { hasText: "Marrakesh." }).waitFor(UI_WAIT);
    await messages.locator("li.user", { hasText: "Somewhere hotter" }).waitFor(UI_WAIT);
    await expect.poll(() => messages.locator("li", { hasText: "Somewhere colder" }).count(), UI_WAIT).toBe(0);
    await expect.poll(() => switcher.locator("option").count(), UI_WAIT).toBe(3);
    expect(await switcher.locator("option:checked").textContent()).toMatch(/^● “Somewhere hotter” \([0-9a-f]{8}\)$/);
    const nodes = await store.db.loadNodes("branched_shared");
    const edited = nodes.find((node) => node.output === "Somewhere hotter");
    expect(edited).toMatchObject({ predecessor: "ba0sha", metadata: { edit_of: "bu1sha" } });
    expect(meta().head_id).toBe(nodes.find((node) => node.output === "Marrakesh.")?.id);
    expect(nodes.filter((node) => node.output === "Oslo." || node.output === "Seville.")).toHaveLength(2);
    await page.screenshot({ path: join(screenshots(), "branch-switcher-after-edit.png"), fullPage: true });

    // Back to the named branch through the switcher.
    await switcher.selectOption({ label: "warmer still" });
    await messages.locator("li.llm", { hasText: "Seville." }).waitFor(UI_WAIT);

    // Archive from the session bar: meta.json and index.json say so, the list hides it; Unarchive brings it back.
    const archive = page.locator("#archive-session");
    const listed = page.locator('#session-list li[data-session-id="branched_shared"]');
    await listed.waitFor(UI_WAIT);
    expect(await archive.textContent()).toBe("Archive");
    await archive.click();
    await expect.poll(() => archive.textContent(), UI_WAIT).toBe("Unarchive");
    await expect.poll(() => listed.count(), UI_WAIT).toBe(0);
    const archivedFlag = (): unknown =>
      (JSON.parse(readFileSync(join(store.root, "branched_shared", "meta.json"), "utf8")) as { archived?: unknown })
        .archived;
    expect(archivedFlag()).toBe(true);
    expect(
      (await store.db.listSessions({ includeArchived: true })).find((s) => s.id === "branched_shared")?.archived,
    ).toBe(true);
    await archive.click();
    await expect.poll(() => archive.textContent(), UI_WAIT).toBe("Archive");
    await listed.waitFor(UI_WAIT);
    expect(archivedFlag()).toBe(false);
    expect(errors).toEqual([]);
  });
});

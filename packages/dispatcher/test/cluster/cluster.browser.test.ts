// Issue 20 in the browser: a two-replica cluster (one sessions root, one fresh PostgreSQL database). A turn
// started on replica A asks a question; the page connected to replica B shows it and answers it, and the turn
// on A finishes with that answer. Screenshot artifact: cluster-question-on-other-replica.png.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agenticFunction, askUser } from "@openprogram/session-context";
import { openStore } from "@openprogram/session-context/store";
import { removeTree } from "@openprogram/session-context/testing";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDispatcher, type Dispatcher } from "../../src/index.js";
import { TestClient } from "../../src/testing/index.js";
import { launchChromium, screenshots, UI_WAIT } from "../browser-kit.js";
import { createTestDatabase, TEST_CLUSTER_SECRET, type TestDatabase } from "./test-database.js";

const pickColor = agenticFunction({ name: "pick_color", doc: "Ask for a color." }, async () => {
  const color = await askUser("Which color?", { choices: ["red", "blue"] });
  return `picked ${color}`;
});

let database: TestDatabase;
let root: string;
let browser: Browser | undefined;
const replicas: Dispatcher[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  root = mkdtempSync(join(tmpdir(), "openprogram-cluster-browser-"));
  for (let index = 0; index < 2; index++)
    replicas.push(
      await createDispatcher({
        port: 0,
        sessionsRoot: root,
        runtime: null,
        programs: { pick_color: pickColor },
        cluster: { postgresUrl: database.url, leaseTtlMs: 2_000, secrets: [TEST_CLUSTER_SECRET] },
      }),
    );
});

afterAll(async () => {
  await browser?.close();
  for (const replica of replicas) await replica.close();
  await database.drop();
  removeTree(root);
});

describe("the web page on a two-replica cluster", () => {
  it("the page on replica B answers a question asked by a turn running on replica A", async () => {
    const [a, b] = replicas as [Dispatcher, Dispatcher];
    const onA = await TestClient.connect(a.wsUrl);
    try {
      onA.send({ type: "run", program: "pick_color" });
      const opened = await onA.next("session");
      const question = await onA.next("question");

      browser = await launchChromium();
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(`${b.url}/?session=${opened.session_id}`);
      await page.locator("#connection[data-state='open']").waitFor(UI_WAIT);
      const dialog = page.locator("#question-dialog");
      await dialog.locator("#question-text", { hasText: "Which color?" }).waitFor(UI_WAIT);
      await expect.poll(() => dialog.getAttribute("open"), UI_WAIT).not.toBeNull();
      await page.screenshot({ path: join(screenshots(), "cluster-question-on-other-replica.png") });

      await dialog.getByRole("button", { name: "blue" }).click();
      const done = await onA.next("turn_done");
      expect(done).toMatchObject({ session_id: opened.session_id, turn_id: opened.turn_id, result: "picked blue" });
      await expect.poll(() => dialog.getAttribute("open"), UI_WAIT).toBeNull();
      // The answer reached the turn on A: the record says so, whichever replica reads it.
      const nodes = await openStore({ root }).loadNodes(opened.session_id);
      expect(nodes.find((node) => node.id === question.question_id)).toMatchObject({
        output: "blue",
        metadata: { status: "answered" },
      });
      expect(pageErrors).toEqual([]);
    } finally {
      onA.close();
    }
  });
});

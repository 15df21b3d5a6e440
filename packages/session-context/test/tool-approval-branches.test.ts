import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, sessionContext, tool } from "../src/index.js";
import { listBranches } from "../src/entries/store.js";
import { createScriptedAsker, createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

const bookTable = tool({
  name: "book_table",
  description: "Book a table.",
  input: { type: "object", properties: { place: { type: "string" } }, required: ["place"] },
  needsApproval: true,
  execute: ({ place }) => `booked ${String(place)}`,
});
const planDay = agenticFunction({ name: "plan_day", doc: "Plan the day." }, async (_input: object, { runtime }) =>
  runtime.exec("Book something.", { tools: [bookTable] }),
);

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-tool-approval-branches-");
});
afterEach(() => store.cleanup());

describe("a tool approval and the session's branches", () => {
  it("the approval question under the model's reply is inside the run: no branch the user did not make", async () => {
    const { runtime } = scriptedRuntime([
      { reply: "", toolCalls: [{ name: "book_table", arguments: { place: "Fjord" } }] },
      "Booked.",
    ]);
    const sessionId = await sessionContext(
      { db: store.db, runtime, asker: createScriptedAsker(["yes"]) },
      async (session) => {
        expect(await planDay({})).toBe("Booked.");
        return session.sessionId;
      },
    );
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.find((node) => node.name === "ask_user")?.output).toBe("yes");
    const branches = await listBranches(sessionId, { db: store.db });
    expect(branches.map((branch) => branch.headId)).toEqual([nodes.find((node) => node.name === "plan_day")?.id]);
  });
});

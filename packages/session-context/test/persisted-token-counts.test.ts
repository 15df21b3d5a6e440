import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PersistedTokenCounts } from "../src/compaction/persisted-token-counts.js";
import { countChatTokens, countChatTokensPersisted, forgetTokenCounts } from "../src/compaction/token-count.js";
import type { ChatMessage } from "../src/providers/types.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { storeInternals } from "../src/store/internal.js";

const history = (salt: string): ChatMessage[] =>
  Array.from({ length: 40 }, (_, index) => ({
    role: index % 2 === 0 ? "user" : "assistant",
    content: `${salt} message ${index}: the method, the data set and the threats to validity ✓ ${"x".repeat(index)}`,
  }));

describe("persisted token counts", () => {
  let store: TempStore | undefined;
  afterEach(() => store?.cleanup());

  async function stateDir(): Promise<string> {
    store = createTempStore("openprogram-token-counts-");
    await store.db.createSession({ id: "long" });
    return storeInternals(store.db).paths("long").state;
  }

  it("never brings a deleted session back as a folder holding only the counts", async () => {
    const dir = await stateDir();
    const counts = PersistedTokenCounts.open(dir, "o200k_base");
    counts.set("hello", 1);
    expect(await store?.db.deleteSession("long")).toBe(true);
    counts.flush();
    expect(existsSync(join(dir, ".."))).toBe(false);
  });

  it("a cold process reuses what an earlier one counted, and counts a changed text again", async () => {
    const dir = await stateDir();
    const open = (vocabulary: "o200k_base" | "cl100k_base") => PersistedTokenCounts.open(dir, vocabulary);
    const messages = history("first");
    const exact = await countChatTokens(messages, "gpt-4o");
    forgetTokenCounts();
    expect(await countChatTokensPersisted(messages, "gpt-4o", open)).toBe(exact);
    const file = join(dir, "token-counts-o200k_base.json");
    const written = JSON.parse(readFileSync(file, "utf8")) as { counts: Record<string, number> };
    expect(Object.keys(written.counts)).toHaveLength(messages.length);

    // Proof the cold count reads the file: doctor one entry and a fresh process believes it.
    const [key, value] = Object.entries(written.counts)[0] as [string, number];
    writeFileSync(file, JSON.stringify({ ...written, counts: { ...written.counts, [key]: value + 1000 } }));
    forgetTokenCounts();
    expect(await countChatTokensPersisted(messages, "gpt-4o", open)).toBe(exact + 1000);

    // A changed node has a different text, so a different key: counted again, exactly.
    const changed = messages.map((message, index) =>
      index === 3 ? { ...message, content: `${message.content}!` } : message,
    );
    forgetTokenCounts();
    const exactChanged = await countChatTokens(changed, "gpt-4o");
    forgetTokenCounts();
    expect(await countChatTokensPersisted(changed, "gpt-4o", open)).toBe(exactChanged + 1000);
    // Another vocabulary keeps its own file.
    forgetTokenCounts();
    expect(await countChatTokensPersisted(messages, "gpt-4", open)).toBe(await countChatTokens(messages, "gpt-4"));
  });

  it("a missing, corrupt or foreign file counts as empty", async () => {
    const dir = await stateDir();
    const file = join(dir, "token-counts-o200k_base.json");
    const messages = history("second");
    const exact = await countChatTokens(messages, "gpt-4o");
    for (const text of ["not json", JSON.stringify({ format: 1, vocabulary: "cl100k_base", counts: {} }), "[]"]) {
      writeFileSync(file, text);
      forgetTokenCounts();
      expect(await countChatTokensPersisted(messages, "gpt-4o", (v) => PersistedTokenCounts.open(dir, v))).toBe(exact);
    }
  });
});

// One fresh process's first token count (run by compaction.ts as a child): the o200k vocabulary's load, then
// the first count of a new 1,000-message history, by the core (`ours`) or by gpt-tokenizer's countTokens alone
// (`library`), each in a process of its own so neither warms the other's caches; `varied` counts the history of
// made-up words instead. Prints {load, count, tokens}, times in ms.
import { loadTokenizer, countChatTokens } from "../src/compaction/token-count.js";
import { tokenHistory, variedHistory } from "./token-history.js";

const which = process.argv[2];
const messages = process.argv[3] === "varied" ? variedHistory(0) : tokenHistory(0);
let started = performance.now();
const library = which === "library" ? await import("gpt-tokenizer/encoding/o200k_base") : null;
if (!library) await loadTokenizer("o200k_base");
const load = performance.now() - started;
started = performance.now();
let tokens = 0;
if (library) for (const message of messages) tokens += library.countTokens(message.content);
else tokens = await countChatTokens(messages, "gpt-4o");
const count = performance.now() - started;
process.stdout.write(`${JSON.stringify({ load, count, tokens })}\n`);

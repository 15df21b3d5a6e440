// Four model calls: two inside a nested agentic call, then two at the top. With CRASH_MARK set to a file that
// does not exist yet, the process kills itself (SIGKILL) after the third call, once: a crash mid-turn.
import { existsSync, writeFileSync } from "node:fs";
import { agenticFunction } from "@openprogram/session-context";

const gather = agenticFunction({ name: "gather", doc: "Give one short fact." }, async ({ topic }, { runtime }) => [
  await runtime.exec(`fact one: ${topic}`),
  await runtime.exec(`fact two: ${topic}`),
]);

export const story = agenticFunction({ name: "story", doc: "Write briefly." }, async ({ topic }, { runtime }) => {
  const facts = await gather({ topic });
  const outline = await runtime.exec(`outline: ${facts.join("; ")}`);
  const mark = process.env.CRASH_MARK;
  if (mark && !existsSync(mark)) {
    writeFileSync(mark, "crashed\n");
    process.kill(process.pid, "SIGKILL");
  }
  return runtime.exec(`write: ${outline}`);
});

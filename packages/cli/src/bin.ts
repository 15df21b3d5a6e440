#!/usr/bin/env node
// The `openprogram` executable: everything lives in main(); this file only
// turns its result into the process's exit.
import { flushQueuedWrites } from "@openprogram/session-context/store";
import { main } from "./main.js";

const result = await main(process.argv);
if (result !== "serving") {
  // The last turn's status and preview are queued for index.json: written now, waiting for the registry
  // lock as any write does, rather than by the exit hook, which waits for it only briefly.
  await flushQueuedWrites();
  // Exit explicitly: a program may leave timers or sockets open, and the turn is already committed.
  process.exit(result);
}

#!/usr/bin/env node
// The `openprogram` executable: everything lives in main(); this file only
// turns its result into the process's exit.
import { main } from "./main.js";

const result = await main(process.argv);
// Exit explicitly: a program may leave timers or sockets open, and the turn is already committed.
if (result !== "serving") process.exit(result);

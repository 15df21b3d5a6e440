// The script runInChild() forks. The channel opens before anything heavy
// loads so that no message from the parent is missed; the rest (the core, the
// user's module) loads after.
import { connectToParent } from "./child/parent-channel.js";

const channel = connectToParent();
const { runChild } = await import("./child/run-child.js");
await runChild(channel);

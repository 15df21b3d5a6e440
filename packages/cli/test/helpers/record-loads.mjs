// Loaded with `node --import`: every module the process resolves is appended to $RECORD_LOADS (one URL a line).
import { register } from "node:module";

register(new URL("./record-loads-hooks.mjs", import.meta.url), { data: { log: process.env.RECORD_LOADS } });

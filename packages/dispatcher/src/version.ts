import { readFileSync } from "node:fs";

/** This package's version (read from package.json, which sits beside src/ and dist/). */
export const DISPATCHER_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

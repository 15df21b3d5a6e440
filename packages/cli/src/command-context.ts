import type { CliIo } from "./io.js";

/** What every command receives besides its own arguments and flags. */
export interface CommandContext {
  io: CliIo;
  /** `--verbose`: print stacks and causes of errors. */
  verbose: boolean;
}

/** What a command resolves to: an exit code, or "serving" for a server that keeps running. */
export type CommandResult = number | "serving";

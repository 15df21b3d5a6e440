import type { Command } from "commander";
import type { CommandContext, CommandResult } from "./command-context.js";

/** A command's implementation: commander's arguments (positionals, then flags), then this run's context. */
export type CommandFunction<Args extends unknown[]> = (...args: [...Args, CommandContext]) => Promise<CommandResult>;

/** Turns "how to import a command's implementation" into a commander action. */
export type LazyAction = <Args extends unknown[]>(
  load: () => Promise<CommandFunction<Args>>,
) => (...received: [...Args, Command]) => Promise<void>;

/**
 * Makes commander actions that import their command module only when they run
 * (so `--help`, `--version` and a typo never load the core, tsx, the
 * dispatcher or the provider SDKs), call it with the command's arguments and
 * this run's context, and hand its result to `settle`.
 */
export function lazyActions(
  context: (command: Command) => CommandContext,
  settle: (run: Promise<CommandResult>) => Promise<void>,
): LazyAction {
  return <Args extends unknown[]>(load: () => Promise<CommandFunction<Args>>) =>
    (...received: [...Args, Command]): Promise<void> => {
      // commander passes the positional arguments, the flags, then the command itself.
      const command = received[received.length - 1] as Command;
      const args = received.slice(0, -1) as Args;
      return settle(load().then((run) => run(...args, context(command))));
    };
}

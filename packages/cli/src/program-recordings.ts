// The `openprogram recordings ...` subcommands: they read recording files and never start a runtime.
import type { Command } from "commander";
import type { LazyAction } from "./lazy-action.js";

/** Adds list, show, check and prune to `recordings`. */
export function addRecordingsCommands(recordings: Command, lazy: LazyAction): void {
  recordings
    .command("list")
    .description("the recordings under a folder: calls, models, tokens, size and date (node_modules and .git skipped)")
    .argument("[dir]", "where to look, recursively (default: here)")
    .option(
      "--json",
      "print {dir, recordings: [{path, calls, models, provider, input_tokens, output_tokens, size, modified, problem}]}",
    )
    .action(lazy(() => import("./commands/recordings.js").then((loaded) => loaded.listRecordingsCommand)));
  recordings
    .command("show")
    .description("a recording's calls: model, the last message sent, the reply, tokens and event count")
    .argument("<file>", "the JSONL recording")
    .option("--json", "print {path, provider, calls: [{call_index, model, messages, tools, reply, usage, events}]}")
    .action(lazy(() => import("./commands/recordings.js").then((loaded) => loaded.showRecordingCommand)));
  recordings
    .command("check")
    .description("check that a recording can be replayed: header version, every call complete (exit 2 if not)")
    .argument("<file>", "the JSONL recording")
    .option("--json", 'print {"ok", "path", "calls"} (or "error")')
    .action(lazy(() => import("./commands/recordings.js").then((loaded) => loaded.checkRecordingCommand)));
  recordings
    .command("prune")
    .description(
      "recordings no test uses: each __recordings__/<name>.jsonl whose name no test file beside the folder quotes; lists them, removes only with --yes",
    )
    .argument("[dir]", "where to look, recursively (default: here)")
    .option("--yes", "remove them (without it nothing is removed)")
    .option("--json", "print {dir, unreferenced: [...as list...], removed: [paths]}")
    .addHelpText(
      "after",
      "\nuseRecording(name) replays __recordings__/<name>.jsonl beside the calling test file, so a recording is in use\nwhen a test file (*.test.* or *.spec.*) in the folder holding __recordings__ has \"<name>\", '<name>' or `<name>`.\nA name built at run time, or useRecording(name, { dir }) from elsewhere, is not seen: check the list first.",
    )
    .action(lazy(() => import("./commands/recordings.js").then((loaded) => loaded.pruneRecordingsCommand)));
}

// Two or three examples at the end of every command's --help, kept in one
// table so a new command cannot go without (the help test walks every command).
import type { Command } from "commander";

/** Examples by command path ("" is openprogram itself). */
export const HELP_EXAMPLES: Record<string, readonly string[]> = {
  "": [
    "openprogram init hello && cd hello && openprogram run program.mts",
    "openprogram chat --provider ollama --model llama3.1",
    "openprogram sessions list",
  ],
  init: ["openprogram init", "openprogram init my-first-program"],
  completion: [
    "openprogram completion bash > ~/.local/share/bash-completion/completions/openprogram",
    "openprogram completion zsh >> ~/.zshrc",
    "openprogram completion fish > ~/.config/fish/completions/openprogram.fish",
  ],
  config: [
    "openprogram config",
    "openprogram config --provider anthropic --json",
    "openprogram --env-file .env config",
  ],
  run: [
    `openprogram run summarize.ts --input '{"text":"..."}'`,
    "openprogram run agents.mjs#plan --input-file plan.json --session session_0123456789 --json",
    "openprogram run triage.mts --mcp github --answers approvals.json --provider ollama --model llama3.1",
  ],
  resume: [
    "openprogram resume session_0123456789",
    "openprogram resume session_0123456789 --turn <turn_id> --json",
    "openprogram resume session_0123456789 --program ~/work/trip/program.mts",
  ],
  trust: ["openprogram trust", "openprogram trust ~/work/cloned-repo", "openprogram trust --list"],
  answer: [
    "openprogram answer session_0123456789 experts",
    "openprogram answer session_0123456789 2 --question <node_id>",
  ],
  mcp: [
    "openprogram mcp --program program.mts#plan",
    "openprogram mcp --program agents.mjs#triage --program agents.mjs#summarize",
  ],
  chat: [
    "openprogram chat",
    'openprogram chat --session session_0123456789 --system "Answer in French."',
    "openprogram chat --mcp github --mcp docs",
  ],
  research: [
    'openprogram research "How do agents recover from tool errors?"',
    'openprogram research "..." --interactive --work-dir ./paper',
    'openprogram research "..." --session session_0123456789   # continues a run that failed',
  ],
  sessions: ["openprogram sessions list --limit 10", "openprogram sessions tree session_0123456789"],
  "sessions list": ["openprogram sessions list", "openprogram sessions list --all --json"],
  recordings: [
    "openprogram recordings list",
    "openprogram recordings show calls.jsonl",
    "openprogram recordings check test/__recordings__/tides.jsonl",
  ],
  "recordings list": ["openprogram recordings list", "openprogram recordings list test --json"],
  "recordings prune": [
    "openprogram recordings prune            # lists the recordings no test uses; removes nothing",
    "openprogram recordings prune --yes      # removes them",
  ],
  "recordings show": ["openprogram recordings show calls.jsonl", "openprogram recordings show calls.jsonl --json"],
  "recordings check": [
    "openprogram recordings check calls.jsonl",
    "openprogram run program.mts --replay calls.jsonl || openprogram recordings check calls.jsonl",
  ],
  "sessions show": [
    "openprogram sessions show session_0123456789",
    "openprogram sessions show session_0123456789 --json",
  ],
  "sessions tree": [
    "openprogram sessions tree session_0123456789",
    "openprogram sessions tree session_0123456789 --json",
  ],
  "sessions log": [
    "openprogram sessions log session_0123456789",
    "openprogram sessions log session_0123456789 --limit 5",
  ],
  "sessions rm": [
    "openprogram sessions rm session_0123456789",
    "openprogram sessions rm session_0123456789 --yes --json",
  ],
  "sessions export": [
    "openprogram sessions export session_0123456789 > session.json",
    "openprogram sessions export session_0123456789 --format md > transcript.md",
  ],
  "sessions compact": [
    "openprogram sessions compact session_0123456789",
    "openprogram sessions compact session_0123456789 --keep-recent-tokens 4000 --json",
  ],
  "sessions usage": [
    "openprogram sessions usage",
    "openprogram sessions usage --by day --since 7d",
    "openprogram sessions usage --by session --since 2026-12-01 --json",
  ],
  "sessions doctor": ["openprogram sessions doctor", "openprogram sessions doctor session_0123456789 --fix"],
  "sessions branches": [
    "openprogram sessions branches session_0123456789",
    'openprogram sessions branches session_0123456789 --name 0a1b2c3d4e5f "warmer"',
  ],
  "sessions checkout": [
    "openprogram sessions checkout session_0123456789 0a1b2c3d4e5f",
    "openprogram sessions checkout session_0123456789 0a1b2c3d4e5f --json",
  ],
  "sessions archive": ["openprogram sessions archive session_0123456789", "openprogram sessions list --archived"],
  "sessions unarchive": [
    "openprogram sessions unarchive session_0123456789",
    "openprogram sessions unarchive session_0123456789 --json",
  ],
  "sessions prune": ["openprogram sessions prune --dry-run", "openprogram sessions prune --json"],
  "sessions gc": ["openprogram sessions gc", "openprogram sessions gc session_0123456789 --json"],
  serve: [
    "openprogram serve",
    "openprogram serve --port 0 --program ./agents.mjs#plan --isolate",
    "openprogram serve --host 0.0.0.0 --token-file /etc/openprogram/token --allowed-origin https://app.example",
  ],
};

/** The path of a command below the root: "sessions list". */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(" ");
}

/** Adds the examples of `command` and of every command below it to their help. */
export function addHelpExamples(command: Command): void {
  const examples = HELP_EXAMPLES[commandPath(command)];
  if (examples) command.addHelpText("after", `\nExamples:\n${examples.map((line) => `  ${line}`).join("\n")}`);
  for (const sub of command.commands) addHelpExamples(sub);
}

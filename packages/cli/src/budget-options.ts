// The budget flags themselves: commander only, so `--help` loads no core.
import { Option, type Command } from "commander";

/** The budget flags of run, chat, research, serve and resume (commander's camel-cased names). */
export interface BudgetFlags {
  maxTurnTokens?: string;
  maxTurnCost?: string;
  maxTurnSeconds?: string;
  maxSessionTokens?: string;
  maxSessionCost?: string;
  maxSessionSeconds?: string;
}

export const BUDGET_FLAGS: readonly [
  flag: string,
  key: keyof BudgetFlags,
  scope: "turn" | "session",
  limit: string,
  help: string,
][] = [
  ["--max-turn-tokens <n>", "maxTurnTokens", "turn", "tokens", "stop a turn whose model calls would use more tokens"],
  [
    "--max-turn-cost <usd>",
    "maxTurnCost",
    "turn",
    "cost",
    "stop a turn whose model calls would cost more (needs prices)",
  ],
  ["--max-turn-seconds <s>", "maxTurnSeconds", "turn", "seconds", "stop a turn at its next model call after this long"],
  [
    "--max-session-tokens <n>",
    "maxSessionTokens",
    "session",
    "tokens",
    "stop once the session has used this many tokens",
  ],
  [
    "--max-session-cost <usd>",
    "maxSessionCost",
    "session",
    "cost",
    "stop once the session has cost this much (needs prices)",
  ],
  [
    "--max-session-seconds <s>",
    "maxSessionSeconds",
    "session",
    "seconds",
    "stop once the session's turns have run this long in all",
  ],
];

/** Adds the budget flags to a command. */
export function addBudgetOptions(command: Command): Command {
  for (const [flag, , , , help] of BUDGET_FLAGS)
    command.addOption(new Option(flag, `${help} (overrides "budgets" in openprogram.config.json)`));
  return command;
}

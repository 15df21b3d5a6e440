import { ReplyFormatError } from "../errors.js";
import type { Experiment, ExperimentPlan } from "../types.js";
import { numberedItem, plain, unfenced } from "./markdown.js";

const FIELDS = [
  { key: "hypothesis", label: "Hypothesis:", pattern: /^hypothes[ie]s$/ },
  { key: "setup", label: "Setup:", pattern: /^setup$/ },
  { key: "metric", label: "Metric:", pattern: /^metrics?$/ },
  { key: "expectedOutcome", label: "Expected outcome:", pattern: /^expected(?: (?:outcomes?|results?))?$/ },
] as const;

// A label starts a line, or follows the end of a sentence or a dash on the same line.
const LABEL =
  /(?:^|\n|(?<=[.;—–]\s))[ \t]*(?:[-*•+][ \t]*)?(?:\*\*|__)?(hypothes[ie]s|setup|metrics?|expected(?:[ \t]+(?:outcomes?|results?))?)[ \t]*(?:\*\*|__)?[ \t]*:[ \t]*(?:\*\*|__)?/gi;

/**
 * Reads design_experiments' reply: a numbered list, one experiment per item,
 * each with Hypothesis:, Setup:, Metric: and Expected outcome: (on their own
 * lines or inline, bulleted or bold). Lines before the list are ignored.
 */
export function parseExperimentPlan(reply: string): ExperimentPlan {
  const items: string[][] = [];
  for (const line of unfenced(reply).split(/\r?\n/)) {
    const item = numberedItem(line);
    if (item) items.push([item.text]);
    else items.at(-1)?.push(line);
  }
  if (items.length === 0)
    throw new ReplyFormatError(
      "design_experiments",
      'no numbered list of experiments ("1. Name" then "Hypothesis: ...")',
      reply,
    );
  const experiments = items.map((lines, index) => readExperiment(lines.join("\n"), index + 1, reply));
  return { text: unfenced(reply).trim(), experiments };
}

function readExperiment(text: string, number: number, reply: string): Experiment {
  const matches = [...text.matchAll(LABEL)];
  const values = new Map<string, string>();
  matches.forEach((match, index) => {
    const field = FIELDS.find((candidate) =>
      candidate.pattern.test((match[1] as string).toLowerCase().replace(/\s+/g, " ")),
    );
    const end = matches[index + 1]?.index ?? text.length;
    const value = plain(text.slice((match.index ?? 0) + match[0].length, end).replace(/\s+/g, " "));
    if (field && !values.has(field.key)) values.set(field.key, value);
  });
  for (const field of FIELDS) {
    if (!values.get(field.key))
      throw new ReplyFormatError("design_experiments", `experiment ${number} has no "${field.label}" line`, reply);
  }
  const name = plain(text.slice(0, matches[0]?.index ?? text.length).replace(/\s+/g, " ")).replace(/\s*[—–:-]\s*$/, "");
  return {
    name: name === "" ? `Experiment ${number}` : name,
    hypothesis: values.get("hypothesis") as string,
    setup: values.get("setup") as string,
    metric: values.get("metric") as string,
    expectedOutcome: values.get("expectedOutcome") as string,
  };
}

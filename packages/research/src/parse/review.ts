import { ReplyFormatError } from "../errors.js";
import type { PaperReview, ReviewScores } from "../types.js";

const SCORES: Array<keyof ReviewScores> = ["novelty", "soundness", "clarity", "significance", "overall"];
const SCORE_LINE =
  /^[\s|*_•>+-]*(novelty|soundness|clarity|significance|overall)(?:\s+score)?[\s*_]*[:=|][\s*_|]*(\d+(?:\.\d+)?)/i;
const DECISION_LINE = /^[\s*_>#•+-]*(?:final\s+)?decision[\s*_]*[:=][\s*_]*([A-Za-z][A-Za-z &-]*?)[\s*_.!]*$/i;
const ACCEPT = /^accept(?:ed)?$/;
const REVISE = /^(?:revise|revision|(?:minor|major) revisions?|revise (?:and|&) resubmit)$/;

/**
 * Reads review_paper's reply: the critique, five scores from 1 to 10 (one per
 * line, "Novelty: 7"), and a closing "Decision: accept" or "Decision: revise"
 * (the last decision line counts; "minor revision" and the like read as revise).
 */
export function parseReview(reply: string): PaperReview {
  const scores: Partial<ReviewScores> = {};
  let decisionWord: string | null = null;
  for (const line of reply.split(/\r?\n/)) {
    const score = SCORE_LINE.exec(line);
    if (score) {
      const key = (score[1] as string).toLowerCase() as keyof ReviewScores;
      const value = Number(score[2]);
      if (scores[key] === undefined) {
        if (!(value >= 1 && value <= 10))
          throw new ReplyFormatError("review_paper", `the ${key} score ${value} is not between 1 and 10`, reply);
        scores[key] = value;
      }
      continue;
    }
    const decision = DECISION_LINE.exec(line);
    if (decision) decisionWord = (decision[1] as string).toLowerCase().replace(/\s+/g, " ").trim();
  }
  const missing = SCORES.filter((key) => scores[key] === undefined);
  if (missing.length > 0)
    throw new ReplyFormatError(
      "review_paper",
      `no score line for ${missing.map(capital).join(", ")} ("${capital(missing[0] as string)}: 7")`,
      reply,
    );
  if (decisionWord === null)
    throw new ReplyFormatError("review_paper", 'no "Decision: accept" or "Decision: revise" line', reply);
  let decision: PaperReview["decision"];
  if (ACCEPT.test(decisionWord)) decision = "accept";
  else if (REVISE.test(decisionWord)) decision = "revise";
  else
    throw new ReplyFormatError(
      "review_paper",
      `the decision ${JSON.stringify(decisionWord)} is neither accept nor revise`,
      reply,
    );
  return { text: reply.trim(), scores: scores as ReviewScores, decision };
}

function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

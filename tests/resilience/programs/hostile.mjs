// Programs for the hostile tests (issue 13): a result nested deeper than
// JSON.stringify goes, a large result, a turn that holds until it is
// cancelled, and a quick turn that records one call.
import { agenticFunction, CancelledError } from "@openprogram/session-context";

export const deep = agenticFunction(
  { name: "deep", doc: "Return a value nested `depth` levels deep." },
  async ({ depth }) => {
    let value = "leaf";
    for (let level = 0; level < depth; level++) value = { a: value };
    return value;
  },
);

export const big = agenticFunction({ name: "big", doc: "Return `size` characters." }, async ({ size }) =>
  "x".repeat(size),
);

export const hold = agenticFunction(
  { name: "hold", doc: "Wait until the turn is cancelled." },
  (_input, { signal }) =>
    new Promise((_resolve, reject) => {
      // A stop can land before the body runs (right after the session frame): the signal is then already aborted.
      if (signal.aborted) reject(new CancelledError(signal.reason));
      else signal.addEventListener("abort", () => reject(new CancelledError(signal.reason)), { once: true });
    }),
);

const note = agenticFunction({ name: "note", doc: "Record a note." }, async ({ text }) => text);

export const quick = agenticFunction({ name: "quick", doc: "Record one nested call and return." }, async ({ text }) =>
  note({ text: text ?? "done" }),
);

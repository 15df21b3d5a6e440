// Ways a child can fail: its own error, process.exit, death by a signal.
import { agenticFunction } from "@openprogram/session-context";

/** A user-defined error with its own code. */
export class DatasetMissingError extends Error {
  readonly code = "dataset_missing";
  constructor(message: string) {
    super(message);
    this.name = "DatasetMissingError";
  }
}

/** Throws DatasetMissingError. */
export const throwsOwnError = agenticFunction(
  { name: "throws_own_error", doc: "Fail." },
  async ({ dataset }: { dataset: string }) => {
    throw new DatasetMissingError(`dataset ${dataset} is not on disk`);
  },
);

/** Calls process.exit(3) in the middle of a call. */
export const exitsWithThree = agenticFunction({ name: "exits_with_three", doc: "Exit." }, async () => {
  process.exit(3);
});

/** Waits (forever) until something kills the process. */
export const waitsForever = agenticFunction({ name: "waits_forever", doc: "Wait." }, async () => {
  await new Promise(() => setInterval(() => undefined, 1000));
});

/** Returns a value that JSON cannot carry back. */
export const returnsBigint = agenticFunction({ name: "returns_bigint", doc: "Return a bigint." }, async () => ({
  big: 10n,
}));

import { describe, expect, it } from "vitest";
import { CancelledError } from "../src/index.js";
import { abortableSleep } from "../src/time/abortable-sleep.js";

describe("abortableSleep", () => {
  it("resolves after the wait when nothing aborts", async () => {
    await expect(abortableSleep(1, new AbortController().signal)).resolves.toBeUndefined();
  });

  it("rejects with CancelledError carrying the reason as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const sleeping = abortableSleep(600_000, controller.signal);
    controller.abort("stop now");
    const error = await sleeping.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as Error).message).toBe("Cancelled: stop now");
  });

  it("rejects at once when the signal has already aborted", async () => {
    await expect(abortableSleep(600_000, AbortSignal.abort("gone"))).rejects.toThrow("Cancelled: gone");
  });
});

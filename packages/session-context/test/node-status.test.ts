import { describe, expect, it } from "vitest";
import { isUnfinished, nodeStatus, type NodeStatus } from "../src/entries/store.js";

const withStatus = (status: unknown): { metadata: Record<string, unknown> } =>
  status === undefined ? { metadata: {} } : { metadata: { status } };

describe("node status", () => {
  it("running calls and waiting questions are unfinished; every ended status is not", () => {
    const unfinished: NodeStatus[] = ["running", "waiting"];
    const ended: NodeStatus[] = [
      "completed",
      "failed",
      "cancelled",
      "answered",
      "declined",
      "timed_out",
      "interrupted",
      "killed",
    ];
    for (const status of unfinished) expect(isUnfinished(withStatus(status)), status).toBe(true);
    for (const status of ended) expect(isUnfinished(withStatus(status)), status).toBe(false);
  });

  it("a node with no status, or one another writer left, is not unfinished", () => {
    for (const status of [undefined, null, 3, ["running"], "paused"]) {
      expect(isUnfinished(withStatus(status)), String(status)).toBe(false);
    }
  });

  it("nodeStatus gives any recorded string as it is, and undefined for anything else", () => {
    expect(nodeStatus(withStatus("completed"))).toBe("completed");
    expect(nodeStatus(withStatus("paused"))).toBe("paused");
    expect(nodeStatus(withStatus(undefined))).toBeUndefined();
    expect(nodeStatus(withStatus(7))).toBeUndefined();
  });
});

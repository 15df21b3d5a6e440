import { describe, expect, it } from "vitest";
import { errnoHint } from "../src/store/errno-hint.js";

describe("errnoHint", () => {
  it("says in a few words what a file-system errno means for the sessions root", () => {
    expect(errnoHint("EROFS")).toBe("the sessions root is on a read-only file system");
    expect(errnoHint("EACCES")).toBe("no permission to write there");
    expect(errnoHint("EPERM")).toBe("no permission to write there");
    expect(errnoHint("ENOSPC")).toBe("the disk is full");
    expect(errnoHint("EDQUOT")).toBe("the disk quota is exhausted");
    expect(errnoHint("ENOTDIR")).toBe("a file is in the way, not a directory");
  });

  it("gives nothing for an errno it has no hint for, so the caller shows the error itself", () => {
    expect(errnoHint("EIO")).toBeUndefined();
    expect(errnoHint(undefined)).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { clipLine, clipText } from "../src/entries/messages.js";

describe("clipText and clipLine", () => {
  it("clipText keeps text that fits and cuts the rest to max characters ending in …", () => {
    expect(clipText("short", 5)).toBe("short");
    expect(clipText("longer text", 6)).toBe("longe…");
    expect(clipText("longer text", 6)).toHaveLength(6);
    expect(clipText("line one\nline two", 100)).toBe("line one\nline two");
  });

  it("clipLine makes one line first: runs of whitespace become one space, ends trimmed", () => {
    expect(clipLine("  line one\n\n  line\ttwo  ", 100)).toBe("line one line two");
    expect(clipLine("line one\nline two", 10)).toBe("line one …");
  });
});

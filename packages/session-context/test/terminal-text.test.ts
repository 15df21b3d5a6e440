import { describe, expect, it } from "vitest";
import { terminalText } from "../src/entries/messages.js";

describe("terminalText", () => {
  it.each([
    ["an OSC title (ESC ] 0 ; ... BEL)", "a\u001b]0;pwned\u0007b", "a\\x1b]0;pwned\\x07b"],
    ["OSC 52 (the clipboard)", "\u001b]52;c;ZXZpbA==\u001b\\", "\\x1b]52;c;ZXZpbA==\\x1b\\"],
    ["CSI (clear the screen)", "\u001b[2J\u001b[H", "\\x1b[2J\\x1b[H"],
    ["C1 CSI and OSC (U+009B, U+009D)", "\u009b31m\u009d0;x\u009c", "\\x9b31m\\x9d0;x\\x9c"],
    ["DEL and NUL", "a\u007fb\u0000", "a\\x7fb\\x00"],
    ["a lone CR (overwrites the line)", "safe\rspoof", "safe\\x0dspoof"],
    ["bidi overrides and isolates", "x\u202eexe.txt\u202c\u2066y\u2069", "x\\u202eexe.txt\\u202c\\u2066y\\u2069"],
  ])("makes %s visible", (_what, raw, shown) => {
    expect(terminalText(raw)).toBe(shown);
  });

  it("keeps newline, tab, CRLF and ordinary Unicode, and is idempotent", () => {
    const text = "line 1\tcol\r\nline 2 — café 日本 🙂\n";
    expect(terminalText(text)).toBe(text);
    const escaped = terminalText("\u001b]0;x\u0007\u202e");
    expect(terminalText(escaped)).toBe(escaped);
  });
});

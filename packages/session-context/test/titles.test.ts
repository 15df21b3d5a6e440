import { describe, expect, it } from "vitest";
import { titleFromMessage, titleFromProgram } from "../src/entries/store.js";

describe("session titles", () => {
  it("takes the first non-blank line of a message, clipped to 50 characters", () => {
    expect(titleFromMessage("\n  \n  Plan my week  \nthen more")).toBe("Plan my week");
    const long = "x".repeat(80);
    expect(titleFromMessage(long)).toBe(`${"x".repeat(49)}…`);
    expect(titleFromMessage("")).toBe("");
  });

  it("names a program run by its call, each argument as JSON and clipped", () => {
    expect(titleFromProgram("plan_day", { town: "Paris", hours: 8 })).toBe('plan_day(town="Paris", hours=8)');
    expect(titleFromProgram("tell", {})).toBe("tell()");
    expect(titleFromProgram("tell", undefined)).toBe("tell()");
    expect(titleFromProgram("echo", "hi")).toBe('echo("hi")');
    const title = titleFromProgram("research", { task: "a".repeat(100), depth: 2 });
    expect(title).toBe(`research(task="${"a".repeat(38)}…, depth=2)`);
    expect(titleFromProgram("p", { text: "a\nb" })).toBe('p(text="a\\nb")');
    expect(titleFromProgram("n".repeat(100), {}).length).toBe(80);
  });
});

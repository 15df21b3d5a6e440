import { agenticFunction } from "@openprogram/session-context";

export const first = agenticFunction({ name: "first", doc: "First." }, async () => "one");
export const second = agenticFunction({ name: "second", doc: "Second." }, async () => "two");
export const helper = (value) => value;

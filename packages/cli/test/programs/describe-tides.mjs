// A schema-typed exec (issue 33): the reply is parsed and validated, and the
// function returns the object. `openprogram run` prints it as JSON.
import { agenticFunction } from "@openprogram/session-context";

export const describeTides = agenticFunction(
  { name: "describe_tides", doc: "Describe the tides of a port: its name and the heights in metres." },
  async ({ port }, { runtime }) =>
    runtime.exec(`Port: ${port}`, {
      schema: {
        type: "object",
        properties: {
          port: { type: "string" },
          heights: { type: "array", items: { type: "number" } },
          note: { type: ["string", "null"] },
        },
        required: ["port", "heights", "note"],
        additionalProperties: false,
      },
    }),
);

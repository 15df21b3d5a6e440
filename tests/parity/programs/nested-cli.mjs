// Programs for the context-carrier test: an agentic function that starts
// `openprogram run` as a plain child process, passing nothing but the
// environment from contextCarrierEnv().
import { execFile } from "node:child_process";
import { agenticFunction } from "@openprogram/session-context";
import { contextCarrierEnv } from "@openprogram/session-context/relay";

export const childStep = agenticFunction(
  { name: "child_step", doc: "Describe the step in one line." },
  async ({ step }, { runtime }) => ({
    text: await runtime.exec(`Step: ${step}`),
    traceparent: process.env.TRACEPARENT ?? null,
  }),
);

export const delegate = agenticFunction(
  { name: "delegate", doc: "Hand the step to a separate openprogram process." },
  async ({ cli, step }) =>
    new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [cli, "run", `${new URL(import.meta.url).pathname}#childStep`, "--input", JSON.stringify({ step }), "--json"],
        { env: { ...process.env, ...contextCarrierEnv() } },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ child: JSON.parse(stdout), stderr }),
      );
    }),
);

// The model call under `draft` never answers in time (the script delays it), so Ctrl-C finds both calls running.
import { agenticFunction } from "@openprogram/session-context";

const draft = agenticFunction({ name: "draft", doc: "Draft the report." }, async (_input, { runtime }) =>
  runtime.exec("Draft it."),
);

export const report = agenticFunction({ name: "report", doc: "Produce the report." }, async () => {
  process.stderr.write("report: started\n");
  return draft({});
});

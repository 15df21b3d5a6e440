// Runs the research harness from its built output, configured only by the
// environment (OPENPROGRAM_PROVIDER / OPENPROGRAM_SCRIPT / OPENPROGRAM_HOME),
// as `openprogram research` does on a fresh machine. Prints the result as JSON.
import process from "node:process";
import { runResearch } from "../../dist/index.js";

const result = await runResearch(process.argv[2] ?? "a demo task");
process.stdout.write(`${JSON.stringify(result)}\n`);

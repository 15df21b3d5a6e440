// @openprogram/cli/testing: run the built `openprogram` binary from tests.
export { CLI_BIN, collect, runCli, spawnCli, stopCliProcesses, type CliResult, type RunCliOptions } from "./run-cli.js";
export { startServe, type ServeLogLine, type ServeProcess } from "./start-serve.js";

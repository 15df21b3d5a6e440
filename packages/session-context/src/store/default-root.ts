import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** `$OPENPROGRAM_HOME`, defaulting to `~/.openprogram`. */
export function openProgramHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.OPENPROGRAM_HOME;
  return home && home.trim() !== "" ? resolve(home) : join(homedir(), ".openprogram");
}

/** `$OPENPROGRAM_HOME/sessions`: where sessions live unless a store root is given. */
export function defaultSessionsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(openProgramHome(env), "sessions");
}

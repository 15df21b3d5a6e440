/**
 * A program run by name inside the caller's session context: the shape a
 * dispatcher registers besides plain agentic functions (the research program,
 * an agentic function run in a child process by the process runner).
 */
export interface ProgramEntry<Output = unknown> {
  /** Runs the program on its input; called inside the turn's session context. */
  run(input: unknown): Promise<Output>;
  /** One line saying what it does, shown in program lists. */
  description?: string;
}

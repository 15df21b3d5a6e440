import { isParentMessage, tag, type ChildMessage, type ParentMessage, type StartMessage } from "../protocol.js";

/** The child's end of the IPC channel to the runner in the parent. */
export interface ParentChannel {
  /** The start message (the first thing the parent sends). */
  readonly started: Promise<StartMessage>;
  /** Sends a message; resolves once it is handed to the operating system (or the parent is gone). */
  send(message: ChildMessage): Promise<void>;
  /** Receives every later message (abort, answers); ones that arrived earlier are replayed. */
  onMessage(listener: (message: ParentMessage) => void): void;
  /** Called once if the parent goes away. */
  onDisconnect(listener: () => void): void;
}

/**
 * Opens the channel. Called first thing in the child, before the core loads,
 * so that no message the parent sends meanwhile is missed.
 */
export function connectToParent(): ParentChannel {
  if (typeof process.send !== "function") {
    throw new Error(
      "child-entry.js is started by runInChild() from @openprogram/process-runner and needs its IPC channel; it cannot run on its own.",
    );
  }
  const early: ParentMessage[] = [];
  let listener: ((message: ParentMessage) => void) | null = null;
  let resolveStart: (message: StartMessage) => void = () => undefined;
  const started = new Promise<StartMessage>((resolve) => (resolveStart = resolve));
  process.on("message", (message: unknown) => {
    if (!isParentMessage(message)) return;
    if (message.type === "start") resolveStart(message);
    else if (listener) listener(message);
    else early.push(message);
  });
  return {
    started,
    send(message) {
      return new Promise<void>((resolve) => {
        if (!process.connected || !process.send) {
          resolve();
          return;
        }
        process.send(tag(message), undefined, {}, () => resolve());
      });
    },
    onMessage(next) {
      listener = next;
      for (const message of early.splice(0)) next(message);
    },
    onDisconnect(next) {
      process.once("disconnect", next);
    },
  };
}

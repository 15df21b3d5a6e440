import { Worker } from "node:worker_threads";
import type { PendingObject } from "./loose-objects.js";

/**
 * Writes a commit's new loose objects on a thread of their own, each as
 * writeLooseObject does (zlib, a `tmp_obj_*` file, renamed to its id; folders
 * made first where `makeFolder` says so), one after another, and resolves
 * once all are in place. Why a thread: every file made in `.git/objects/` (the
 * temp file, its rename, a new fan-out folder) waits whenever the file
 * system's journal is being committed, which concurrent turns' fsyncs keep it
 * doing; profiled under 50 concurrent turns, the objects' writes held the
 * event loop's thread for about a third of its time, blocked rather than
 * computing. One message a commit costs less than the thread pool's hand-off
 * per system call that writing them asynchronously took (measured earlier:
 * more system time per turn, not less). The thread is made on first use and
 * never keeps the process alive.
 */
export function writeObjectsOffThread(
  gitDir: string,
  objects: ReadonlyArray<PendingObject & { makeFolder: boolean }>,
): Promise<void> {
  if (objects.length === 0) return Promise.resolve();
  const thread = objectThread();
  const job = thread.nextJob++;
  return new Promise<void>((resolve, reject) => {
    thread.waiting.set(job, { resolve, reject });
    thread.worker.ref();
    thread.worker.postMessage({ job, gitDir, objects });
  });
}

interface ObjectThread {
  worker: Worker;
  nextJob: number;
  waiting: Map<number, { resolve: () => void; reject: (error: Error) => void }>;
}

let current: ObjectThread | null = null;

function objectThread(): ObjectThread {
  if (current) return current;
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  const thread: ObjectThread = { worker, nextJob: 0, waiting: new Map() };
  worker.unref();
  worker.on("message", ({ job, error }: { job: number; error?: { message: string; code?: string } }) => {
    const waiter = thread.waiting.get(job);
    thread.waiting.delete(job);
    if (thread.waiting.size === 0) worker.unref();
    if (!waiter) return;
    if (error) waiter.reject(Object.assign(new Error(error.message), error.code ? { code: error.code } : {}));
    else waiter.resolve();
  });
  const fail = (error: Error): void => {
    // A thread that died fails what it had; the next commit starts another.
    if (current === thread) current = null;
    for (const waiter of thread.waiting.values()) waiter.reject(error);
    thread.waiting.clear();
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the loose-object writer thread exited (code ${code})`)));
  current = thread;
  return thread;
}

/**
 * The thread's code, plain JavaScript evaluated in it: the package's tests run from its TypeScript sources, where a
 * worker file next to this one could not be loaded. It does what writeObjectFile (loose-objects.ts) does.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { closeSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } = require("node:fs");
const { randomBytes } = require("node:crypto");
const { join } = require("node:path");
const { deflateSync } = require("node:zlib");
const OBJECT_MODE = 0o400;
const DIRECTORY_MODE = 0o700;
parentPort.on("message", ({ job, gitDir, objects }) => {
  try {
    for (const object of objects) writeObject(gitDir, object);
    parentPort.postMessage({ job });
  } catch (error) {
    parentPort.postMessage({ job, error: { message: String(error && error.message), code: error && error.code } });
  }
});
function writeObject(gitDir, object) {
  const folder = join(gitDir, "objects", object.id.slice(0, 2));
  const makeFolder = () => mkdirSync(folder, { recursive: true, mode: DIRECTORY_MODE });
  if (object.makeFolder) makeFolder();
  const temporary = join(folder, "tmp_obj_" + randomBytes(4).toString("hex"));
  const header = Buffer.from(object.type + " " + object.content.length + "\\0");
  const compressed = deflateSync(Buffer.concat([header, object.content]), { level: 1 });
  let fd;
  try {
    fd = openSync(temporary, "wx", OBJECT_MODE);
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
    // git gc removes fan-out folders it emptied: make it again.
    makeFolder();
    fd = openSync(temporary, "wx", OBJECT_MODE);
  }
  try {
    writeSync(fd, compressed);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, join(folder, object.id.slice(2)));
}
`;

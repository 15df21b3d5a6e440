import {
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  unlink as unlinkWithCallback,
} from "node:fs";
import { join } from "node:path";
import { randomHex } from "../ids.js";
import { closeQuietly, createOffThread, DIR_MODE, unlinkQuietly } from "./atomic-file.js";
import { isProcessAlive } from "./process-liveness.js";
import type { SessionPaths } from "./layout.js";

/**
 * Empty files made ahead of a turn's node writes, in the session's `.state/spare/`, so that a write renames one
 * into place instead of creating its temp file first.
 *
 * Why: creating a file waits for the file system's journal (measured on this project's reference disk: 0.25 to
 * 0.35 ms for an empty file, against 0.1 ms for the write and rename after it), and a tool loop makes four node
 * writes an iteration, one after another. A spare is made on libuv's pool while the turn waits for its model
 * or runs its tool, and the next write takes it ready. A spare is a file like any temp file: written whole,
 * then renamed over its name (a reader sees the old file or the new one, never a part), and the session's
 * write-ahead log makes it durable as before (session-wal.ts). It is renamed from `.state/spare/` into history/
 * or the session folder: the same file system, checked once per turn. Spares wait closed (a server with many
 * sessions in turns holds no descriptor for them); a taken one is opened again (an existing file: no wait on the
 * journal), never through a link.
 *
 * A stock lives while turns of this process run in the session (TurnLifecycle opens and closes it) and
 * SPARE_IDLE_MS after the last; its files are removed then, when the session is deleted, or at the process's
 * exit. A process killed mid-turn leaves a few empty files named
 * `<pid>-<hex>`: the next turn of any process removes those of processes no longer alive. Git ignores
 * `.state/`, and Python never reads it.
 */
export interface SpareFile {
  readonly path: string;
  readonly fd: number;
}

/**
 * How a taken spare is opened: an existing file, so no wait on the journal (O_TRUNC would make one: it stamps the
 * file's times), never through a link. Spares are closed while they wait, so a server with many sessions in
 * turns holds no descriptor for them.
 */
const OPEN_SPARE = constants.O_WRONLY | constants.O_NOFOLLOW;

/** Spares kept ready per session: a node and the meta.json beside it, or two writes with no wait between. */
export const SPARE_STOCK = 2;

/**
 * How long a stock outlives its last turn: a session in use (a chat, a server's client) begins its next turn
 * sooner, and takes the spares left over instead of removing them and making new ones (measured with 50
 * sessions at once, removing and remaking them at every turn cost 1.15x the wall time per turn).
 */
export const SPARE_IDLE_MS = 2_000;

/**
 * Sessions in turns with a stock at once, per process. A spare is renamed across folders (from `.state/spare/`),
 * and renames across folders take the file system's one rename lock: measured with 8 at once on this disk, 81 us
 * each against 38 us within a folder (148 against 130 us one at a time). With many sessions in turns at once
 * (a server), that costs more than the creations it saves (50 at once: 1.05x the wall time per turn), so while
 * this many sessions have turns using spares, a session beginning a turn gets none: its writes create temp files
 * beside their names as before. A stock waiting for its session's next turn does not count.
 */
export const MAX_SPARE_STOCKS = 4;

/** Stocks with a turn using them now (users > 0). */
let stocksInUse = 0;

interface Stock {
  readonly folder: string;
  /** Removes the stock once it has been idle SPARE_IDLE_MS (set while no turn uses it). */
  idleTimer: NodeJS.Timeout | null;
  /** Paths of spares made and closed, ready to be opened and filled. */
  readonly ready: string[];
  /** Creations under way, with the path each makes; a closing stock waits for them. */
  readonly making: Map<Promise<void>, string>;
  users: number;
  /** Retired (out of the map): a creation failed, or it is closing; make no more, take none. */
  stopped: boolean;
}

/** By spare folder. */
const stocks = new Map<string, Stock>();
let exitHookInstalled = false;

/**
 * Starts (or joins) the session's stock of spare files for a turn, making the files in the background (unless
 * MAX_SPARE_STOCKS sessions have one already).
 * Returns the closer: once every turn that opened it has closed it, the stock's files are removed after
 * SPARE_IDLE_MS unless a turn opens it again meanwhile. A session where spares cannot be used (a folder that is
 * not ours to write, another file system) gets no stock: its writes create temp files as they always did.
 */
export function openSpareStock(paths: SessionPaths): () => void {
  const existing = stocks.get(paths.spare);
  if (existing) {
    if (existing.users++ === 0) stocksInUse++;
    if (existing.idleTimer) clearTimeout(existing.idleTimer);
    existing.idleTimer = null;
    return closerOf(existing);
  }
  if (stocksInUse >= MAX_SPARE_STOCKS || !prepareFolder(paths)) return () => undefined;
  const stock: Stock = {
    folder: paths.spare,
    idleTimer: null,
    ready: [],
    making: new Map(),
    users: 1,
    stopped: false,
  };
  stocks.set(paths.spare, stock);
  stocksInUse++;
  installExitHook();
  for (let count = 0; count < SPARE_STOCK; count++) makeOne(stock);
  return closerOf(stock);
}

/** A ready spare for a write into the session (and another starts being made), or null: create a temp file. */
export function takeSpare(paths: SessionPaths): SpareFile | null {
  const stock = stocks.get(paths.spare);
  if (!stock) return null;
  for (let path = stock.ready.shift(); path !== undefined; path = stock.ready.shift()) {
    makeOne(stock);
    let fd: number | null = null;
    try {
      fd = openSync(path, OPEN_SPARE);
      // Written to meanwhile (what we write would end in their bytes), or another name of some other file (a hard
      // link: our write would change that file): not ours to use.
      const stat = fstatSync(fd);
      if (stat.size === 0 && stat.nlink === 1) return { path, fd };
    } catch {
      // Removed or replaced behind our back (a link is refused): the next one, or a temp file of the write's own.
    }
    if (fd !== null) closeQuietly(fd);
    unlinkQuietly(path);
  }
  return null;
}

/**
 * Forgets the session's stock, if any (the session was deleted: its files went with it, and a session made
 * again under the same id must not be handed them). Its open turns' closers then have nothing left to remove.
 */
export function forgetSpareStock(paths: SessionPaths): void {
  const stock = stocks.get(paths.spare);
  if (!stock) return;
  retire(stock);
  for (const path of stock.ready.splice(0)) unlinkQuietly(path);
}

/** The closer of one turn's use: the last one out leaves the stock to be removed once idle (SPARE_IDLE_MS). */
function closerOf(stock: Stock): () => void {
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    if (--stock.users > 0) return;
    stocksInUse--;
    if (stock.stopped) return;
    stock.idleTimer = setTimeout(() => void drain(stock), SPARE_IDLE_MS).unref();
  };
}

/** Makes no more spares, waits for those under way, and removes every one not taken. */
async function drain(stock: Stock): Promise<void> {
  retire(stock);
  await Promise.all(stock.making.keys());
  await Promise.all(stock.ready.splice(0).map(removeOffThread));
}

/** Stops the stock and takes it out of the map: a stock in the map is one still in use or waiting for a turn. */
function retire(stock: Stock): void {
  stock.stopped = true;
  if (stock.idleTimer) clearTimeout(stock.idleTimer);
  stock.idleTimer = null;
  if (stocks.get(stock.folder) === stock) stocks.delete(stock.folder);
}

function makeOne(stock: Stock): void {
  if (stock.stopped) return;
  const path = join(stock.folder, `${process.pid}-${randomHex(8)}`);
  const made: Promise<void> = createOffThread(path).then(
    (fd) => {
      stock.making.delete(made);
      closeQuietly(fd);
      // A stock that closed meanwhile removes it as it removes the others.
      if (stock.stopped) return removeOffThread(path);
      stock.ready.push(path);
    },
    () => {
      stock.making.delete(made);
      // A full disk, a folder gone: the writes create their own temp files, and report what fails them.
      void drain(stock);
    },
  );
  stock.making.set(made, path);
}

function removeOffThread(path: string): Promise<void> {
  return new Promise((resolve) => unlinkWithCallback(path, () => resolve()));
}

/**
 * `.state/spare/` made a real folder of ours on the session's file system, and emptied of what processes no
 * longer alive left there; false when spares cannot be used here.
 */
function prepareFolder(paths: SessionPaths): boolean {
  try {
    mkdirSync(paths.spare, { mode: DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  try {
    const folder = lstatSync(paths.spare);
    // A link planted here would have spares made elsewhere; a mount point would make every rename fail (EXDEV).
    if (!folder.isDirectory() || folder.dev !== lstatSync(paths.history).dev || folder.dev !== lstatSync(paths.dir).dev)
      return false;
    for (const name of readdirSync(paths.spare)) {
      const pid = Number(/^(\d+)-[0-9a-f]+$/.exec(name)?.[1] ?? Number.NaN);
      if (pid !== process.pid && Number.isInteger(pid) && !isProcessAlive(pid)) unlinkQuietly(join(paths.spare, name));
    }
    return true;
  } catch {
    return false;
  }
}

/** A process that exits during a turn leaves no spare behind. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const stock of stocks.values()) {
      for (const path of stock.ready.splice(0)) unlinkQuietly(path);
      // Made on the pool, its completion not yet delivered: the file is there (or, rarely, made just after this;
      // then the next turn removes it as a dead process's).
      for (const path of stock.making.values()) unlinkQuietly(path);
    }
  });
}

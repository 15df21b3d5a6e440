// Locks and turn leases name their holder by pid and start (process-liveness.ts): a pid handed to another process
// after its holder died (in a container restarted after a crash, often this very process's pid) no longer makes a
// dead holder's lock or lease look live. Real lock files, real child processes; Linux's /proc gives the start.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreLockTimeoutError } from "../src/errors.js";
import { acquireLockFile } from "../src/store/file-lock.js";
import { SessionPaths } from "../src/store/layout.js";
import { isHolderAlive, ownProcessStart, processStart } from "../src/store/process-liveness.js";
import { liveTurnLeases, takeTurnLease } from "../src/store/turn-lease.js";
import { claimIsLive, resumedBy } from "../src/turns/find-resumable.js";
import type { SessionNode } from "../src/store/types.js";
import { removeTree } from "../src/testing/index.js";

/** Long enough that no lock in these tests is ever broken for its age: only its holder decides. */
const NEVER_STALE = { staleMs: 600_000 };

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "openprogram-liveness-"));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  removeTree(dir);
});

/** A live process of this machine other than this one. */
async function otherProcess(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => undefined, 1000)"], { stdio: "ignore" });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  return child.pid as number;
}

/** The start a process had that is not the one running under `pid` now (a previous process with its pid). */
function earlierStart(pid: number): string {
  const [boot, ticks] = (processStart(pid) as string).split("/");
  return `${boot}/${Number(ticks) - 1}`;
}

describe.runIf(existsSync("/proc/self/stat"))("a holder named by pid and start", () => {
  it("reads a process's start: this process's, a child's (later), none for a process gone", async () => {
    const own = ownProcessStart();
    expect(own).toMatch(/^[^/ ]+\/\d+$/);
    expect(processStart(process.pid)).toBe(own);
    const pid = await otherProcess();
    const child = processStart(pid) as string;
    expect(Number(child.split("/")[1])).toBeGreaterThanOrEqual(Number((own as string).split("/")[1]));
    expect(isHolderAlive(pid, child)).toBe(true);
    expect(isHolderAlive(pid, earlierStart(pid))).toBe(false);
    // Written before starts were recorded: judged by the pid alone.
    expect(isHolderAlive(pid, undefined)).toBe(true);
    const exited = children.pop() as ChildProcess;
    const gone = new Promise((resolve) => exited.once("exit", resolve));
    exited.kill("SIGKILL");
    await gone;
    expect(isHolderAlive(pid, child)).toBe(false);
  });

  it("breaks a lock left by an earlier process with this process's pid at once, not after the stale limit", async () => {
    const lock = join(dir, "lock");
    // A container restarted after a crash: the crashed process had the pid this one has now.
    writeFileSync(lock, `${process.pid} ${hostname()} 0123456789ab ${earlierStart(process.pid)}\n`);
    const acquired = await acquireLockFile(lock, { ...NEVER_STALE, timeoutMs: 3_000 });
    expect(readFileSync(lock, "utf8")).toBe(acquired.content);
    expect(acquired.content).toBe(
      `${process.pid} ${hostname()} ${acquired.content.split(" ")[2]} ${ownProcessStart()}\n`,
    );
    acquired.release();
  });

  it("keeps a lock whose holder runs, and breaks it once the pid names another process", async () => {
    const pid = await otherProcess();
    const lock = join(dir, "lock");
    writeFileSync(lock, `${pid} ${hostname()} 0123456789ab ${processStart(pid)}\n`);
    await expect(acquireLockFile(lock, { ...NEVER_STALE, timeoutMs: 200 })).rejects.toBeInstanceOf(
      StoreLockTimeoutError,
    );
    // The same file in the format written before starts were recorded: the pid alone keeps it, as it always did.
    writeFileSync(lock, `${pid} ${hostname()} 0123456789ab\n`);
    await expect(acquireLockFile(lock, { ...NEVER_STALE, timeoutMs: 200 })).rejects.toBeInstanceOf(
      StoreLockTimeoutError,
    );
    // Its holder died and the pid went to the process running now.
    writeFileSync(lock, `${pid} ${hostname()} 0123456789ab ${earlierStart(pid)}\n`);
    const acquired = await acquireLockFile(lock, { ...NEVER_STALE, timeoutMs: 3_000 });
    expect(readFileSync(lock, "utf8")).toBe(acquired.content);
    acquired.release();
  });

  it("counts a turn's lease live only while the process that took it runs", async () => {
    const paths = new SessionPaths(dir, "session_0123456789");
    mkdirSync(paths.turns, { recursive: true });
    await takeTurnLease(paths, "turn_live");
    expect(readFileSync(join(paths.turns, "turn_live.lease"), "utf8")).toMatch(
      new RegExp(`^${process.pid} ${hostname()} \\d+ ${ownProcessStart()}\\n$`),
    );
    // Left by the crashed process that had this pid before a restart: its turn is over and can be recovered.
    const crashed = join(paths.turns, "turn_crashed.lease");
    writeFileSync(crashed, `${process.pid} ${hostname()} 1700000000000 ${earlierStart(process.pid)}\n`);
    // Written before starts were recorded, by a live process: live, as before.
    const pid = await otherProcess();
    writeFileSync(join(paths.turns, "turn_older_format.lease"), `${pid} ${hostname()} 1700000000000\n`);
    expect(liveTurnLeases(paths).sort()).toEqual(["turn_live", "turn_older_format"]);
    expect(existsSync(crashed)).toBe(false);
  });

  it("counts a resume's claim live only while the process that made it runs", async () => {
    const pid = await otherProcess();
    const claimOf = (start?: string) =>
      resumedBy({
        metadata: {
          resumed_by: { turn_id: "turn_a", node_id: "continuation", pid, host: hostname(), start, at: 1 },
        },
      } as unknown as SessionNode);
    expect(claimOf(processStart(pid) as string)?.start).toBe(processStart(pid));
    expect(claimIsLive(claimOf(processStart(pid) as string), [], null)).toBe(true);
    // The resume that claimed it died and its pid went to the process running now: the turn may be resumed again.
    expect(claimIsLive(claimOf(earlierStart(pid)), [], null)).toBe(false);
    // Written before starts were recorded: the pid alone, as before.
    expect(claimIsLive(claimOf(undefined), [], null)).toBe(true);
  });
});

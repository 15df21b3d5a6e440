import pg from "pg";
import { DatabaseUnavailableError } from "../errors.js";

/** Statements that take longer than this are cancelled by the server: a stuck query never holds a turn. */
export const STATEMENT_TIMEOUT_MS = 5_000;
/** Waiting this long for a connection (pool full, or server down) fails the call. */
const CONNECT_TIMEOUT_MS = 3_000;

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable URL)";
  }
}

/** Connection settings shared by the pool and the event channel's own connection. */
export function connectionConfig(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: "openprogram-dispatcher",
    // Everything this database holds is coordination, never the record (that is in git): a commit need not wait
    // for its WAL flush (measured: a lease acquire + release took 15 ms with it on a slow disk, under 1 ms without).
    // A database crash can then lose the last ~200 ms of commits; a lease lost that way is noticed by its holder
    // at its next renewal (lease_lost), as in an outage.
    options: "-c synchronous_commit=off",
  };
}

/**
 * A bounded pool. Idle connections that break (the server restarted) are
 * dropped by pg; the error is reported, never thrown out of the process.
 */
export function createPool(url: string, size: number, onError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({ ...connectionConfig(url), max: size, idleTimeoutMillis: 30_000 });
  pool.on("error", onError);
  return pool;
}

/** Runs one statement; any failure to reach the server becomes DatabaseUnavailableError. */
export async function query<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(text, values);
  } catch (error) {
    throw new DatabaseUnavailableError(redactUrl(url), error);
  }
}

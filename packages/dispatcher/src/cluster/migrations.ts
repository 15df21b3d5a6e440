import type pg from "pg";
import { SchemaTooNewError } from "../errors.js";

/** Key of the advisory lock migrations run under: replicas starting at once migrate one after another. */
const MIGRATION_LOCK_KEY = 7_314_250_220_001;

/** The schema, one step per version; a step is never edited once released, only followed by another. */
export const MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE openprogram_replicas (
        id text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        url text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE openprogram_session_leases (
        session_id text PRIMARY KEY,
        owner text NOT NULL,
        acquired_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX openprogram_session_leases_owner ON openprogram_session_leases (owner);
      CREATE TABLE openprogram_event_payloads (
        id bigserial PRIMARY KEY,
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );`,
  },
  {
    // A replica found dead is marked gone (by one live replica) instead of staying "stale" forever; the row is
    // kept a while so the core still learns that its turns' lease files belong to a dead process.
    version: 2,
    sql: `ALTER TABLE openprogram_replicas ADD COLUMN gone_at timestamptz;`,
  },
  {
    // Every channel message is a signed row now (issue 30): notifications carry only its id. Unsigned rows of
    // earlier releases are of no use to anyone.
    version: 3,
    sql: `DELETE FROM openprogram_event_payloads;
      ALTER TABLE openprogram_event_payloads ADD COLUMN mac text;`,
  },
  {
    // Budgets shared by the replicas (issue 36): what each key (a session, a program's day) spent, and the
    // reservations of calls in flight, which expire with their replica's lease. Version 3 is issue 30's.
    version: 4,
    sql: `
      CREATE TABLE openprogram_budget_spend (
        key text PRIMARY KEY,
        tokens double precision NOT NULL DEFAULT 0,
        cost double precision NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE openprogram_budget_holds (
        id uuid PRIMARY KEY,
        key text NOT NULL,
        owner text NOT NULL,
        tokens double precision NOT NULL,
        cost double precision NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX openprogram_budget_holds_key ON openprogram_budget_holds (key);
      CREATE INDEX openprogram_budget_holds_owner ON openprogram_budget_holds (owner);
      -- One round trip per reservation: the key's row locked, expired holds given back, the hold added if it fits.
      CREATE FUNCTION openprogram_budget_reserve(
        p_key text, p_id uuid, p_owner text, p_tokens float8, p_cost float8,
        p_limit_tokens float8, p_limit_cost float8, p_seed_tokens float8, p_seed_cost float8, p_ttl_ms integer
      ) RETURNS TABLE (granted boolean, dimension text, spent float8) LANGUAGE plpgsql AS $$
      DECLARE
        s_tokens float8; s_cost float8; h_tokens float8; h_cost float8;
      BEGIN
        INSERT INTO openprogram_budget_spend (key, tokens, cost) VALUES (p_key, p_seed_tokens, p_seed_cost)
          ON CONFLICT (key) DO NOTHING;
        SELECT b.tokens, b.cost INTO s_tokens, s_cost FROM openprogram_budget_spend b WHERE b.key = p_key FOR UPDATE;
        DELETE FROM openprogram_budget_holds h WHERE h.key = p_key AND h.expires_at < now();
        SELECT coalesce(sum(h.tokens), 0), coalesce(sum(h.cost), 0) INTO h_tokens, h_cost
          FROM openprogram_budget_holds h WHERE h.key = p_key;
        IF p_limit_tokens IS NOT NULL AND s_tokens + h_tokens + p_tokens > p_limit_tokens THEN
          RETURN QUERY SELECT false, 'tokens'::text, s_tokens + h_tokens;
          RETURN;
        END IF;
        IF p_limit_cost IS NOT NULL AND s_cost + h_cost + p_cost > p_limit_cost THEN
          RETURN QUERY SELECT false, 'cost'::text, s_cost + h_cost;
          RETURN;
        END IF;
        INSERT INTO openprogram_budget_holds (id, key, owner, tokens, cost, expires_at)
          VALUES (p_id, p_key, p_owner, p_tokens, p_cost, now() + p_ttl_ms * interval '1 millisecond');
        RETURN QUERY SELECT true, NULL::text, s_tokens + h_tokens;
      END $$;`,
  },
  {
    // Issue 36, the rest: wall time per key (a program's turns' seconds per day), and provider capacity shared by
    // the replicas: a row per request, in flight until released or until its replica's lease on it expires (a
    // dead replica's requests stop counting as in flight; they still began within their minute).
    version: 5,
    sql: `
      ALTER TABLE openprogram_budget_spend ADD COLUMN seconds double precision NOT NULL DEFAULT 0;
      CREATE TABLE openprogram_capacity_slots (
        id uuid PRIMARY KEY,
        key text NOT NULL,
        owner text NOT NULL,
        tokens double precision NOT NULL,
        started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        in_flight boolean NOT NULL DEFAULT true,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX openprogram_capacity_slots_key ON openprogram_capacity_slots (key, started_at);
      CREATE INDEX openprogram_capacity_slots_owner ON openprogram_capacity_slots (owner) WHERE in_flight;
      -- Replicas with callers waiting for a key, and since when their first one waits: room goes to the one that
      -- waited longest, so a replica whose own requests end (and that asks again at once) cannot starve the others.
      CREATE TABLE openprogram_capacity_waiters (
        key text NOT NULL,
        owner text NOT NULL,
        since timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (key, owner)
      );
      -- One round trip per request: the key locked for the transaction, expired slots let go, the slot taken if
      -- every limit has room beside the replicas that waited longer. clock_timestamp(), not now(): the time after
      -- the lock was granted.
      CREATE FUNCTION openprogram_capacity_acquire(
        p_key text, p_id uuid, p_owner text, p_tokens float8,
        p_max_concurrent integer, p_requests_per_minute integer, p_tokens_per_minute float8, p_ttl_ms integer,
        p_since timestamptz, p_wait_ms integer
      ) RETURNS TABLE (granted boolean, full_limit text) LANGUAGE plpgsql AS $$
      DECLARE
        t timestamptz; n_flight integer; n_window integer; t_window float8; n_older integer; v_full text;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('openprogram_capacity'), hashtext(p_key));
        t := clock_timestamp();
        DELETE FROM openprogram_capacity_waiters w WHERE w.key = p_key AND w.expires_at < t;
        SELECT count(*) INTO n_older FROM openprogram_capacity_waiters w
          WHERE w.key = p_key AND w.owner <> p_owner AND w.since < p_since;
        UPDATE openprogram_capacity_slots c SET in_flight = false
          WHERE c.key = p_key AND c.in_flight AND c.expires_at < t;
        DELETE FROM openprogram_capacity_slots c
          WHERE c.key = p_key AND NOT c.in_flight AND c.started_at <= t - interval '1 minute';
        IF p_max_concurrent IS NOT NULL THEN
          SELECT count(*) INTO n_flight FROM openprogram_capacity_slots c WHERE c.key = p_key AND c.in_flight;
          IF n_flight + n_older >= p_max_concurrent THEN
            v_full := 'maxConcurrent';
          END IF;
        END IF;
        IF v_full IS NULL AND (p_requests_per_minute IS NOT NULL OR p_tokens_per_minute IS NOT NULL) THEN
          SELECT count(*), coalesce(sum(c.tokens), 0) INTO n_window, t_window FROM openprogram_capacity_slots c
            WHERE c.key = p_key AND c.started_at > t - interval '1 minute';
          IF p_requests_per_minute IS NOT NULL AND n_window + n_older >= p_requests_per_minute THEN
            v_full := 'requestsPerMinute';
          ELSIF p_tokens_per_minute IS NOT NULL AND n_window > 0 AND t_window + p_tokens > p_tokens_per_minute THEN
            v_full := 'tokensPerMinute';
          END IF;
        END IF;
        IF v_full IS NOT NULL THEN
          -- Waiting: this replica's place in line, kept while it keeps asking.
          INSERT INTO openprogram_capacity_waiters (key, owner, since, expires_at)
            VALUES (p_key, p_owner, p_since, t + p_wait_ms * interval '1 millisecond')
            ON CONFLICT (key, owner) DO UPDATE SET since = EXCLUDED.since, expires_at = EXCLUDED.expires_at;
          RETURN QUERY SELECT false, v_full;
          RETURN;
        END IF;
        DELETE FROM openprogram_capacity_waiters w WHERE w.key = p_key AND w.owner = p_owner;
        INSERT INTO openprogram_capacity_slots (id, key, owner, tokens, started_at, expires_at)
          VALUES (p_id, p_key, p_owner, p_tokens, t, t + p_ttl_ms * interval '1 millisecond');
        RETURN QUERY SELECT true, NULL::text;
      END $$;`,
  },
];

export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((step) => step.version));

/**
 * Brings the schema to SCHEMA_VERSION, each step in its own transaction,
 * under a session advisory lock so that replicas starting together never run
 * a step twice. A database migrated further (by a newer release) is refused
 * with SchemaTooNewError: this release would misread it.
 */
export async function migrate(client: pg.ClientBase): Promise<{ from: number; to: number }> {
  await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
  try {
    await client.query(
      "CREATE TABLE IF NOT EXISTS openprogram_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const found = await client.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM openprogram_schema",
    );
    const from = found.rows[0]?.version ?? 0;
    if (from > SCHEMA_VERSION) throw new SchemaTooNewError(from, SCHEMA_VERSION);
    for (const step of MIGRATIONS) {
      if (step.version <= from) continue;
      await client.query("BEGIN");
      try {
        await client.query(step.sql);
        await client.query("INSERT INTO openprogram_schema (version) VALUES ($1)", [step.version]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
    }
    return { from, to: SCHEMA_VERSION };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
  }
}

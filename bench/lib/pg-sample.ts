/**
 * What Postgres was doing: the bench database's counters (pg_stat_database, and the
 * server's pg_stat_wal) around a run, and its client backends sampled from
 * pg_stat_activity (state, wait event, statement).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { all, one } from './db.js';

export interface DbStats {
  commits: number;
  rollbacks: number;
  inserted: number;
  updated: number;
  deleted: number;
  fetched: number;
  /** Server-wide (pg_stat_wal): every database on the server, other runs' tests included. */
  walRecords: number;
  walSyncs: number;
}

/** The current database's counters (pg_stat_database) and the server's WAL counters; null if unreadable. */
export async function dbStats(): Promise<DbStats | null> {
  try {
    const r = await one<{ c: string; r: string; i: string; u: string; d: string; f: string; wr: string | null; ws: string | null }>(
      `SELECT d.xact_commit AS c, d.xact_rollback AS r, d.tup_inserted AS i, d.tup_updated AS u, d.tup_deleted AS d, d.tup_fetched AS f,
              w.wal_records AS wr, w.wal_sync AS ws
         FROM pg_stat_database d LEFT JOIN pg_stat_wal w ON true WHERE d.datname = current_database()`,
    );
    return {
      commits: Number(r.c),
      rollbacks: Number(r.r),
      inserted: Number(r.i),
      updated: Number(r.u),
      deleted: Number(r.d),
      fetched: Number(r.f),
      walRecords: Number(r.wr ?? Number.NaN),
      walSyncs: Number(r.ws ?? Number.NaN),
    };
  } catch {
    return null;
  }
}

export function statsDelta(a: DbStats | null, b: DbStats | null): DbStats | null {
  if (!a || !b) return null;
  const out = { ...b };
  for (const k of Object.keys(out) as (keyof DbStats)[]) out[k] = b[k] - a[k];
  return out;
}

export interface WaitRow {
  state: string;
  wait: string;
  query: string;
  /** Backends in this state per sample, on average over the samples. */
  mean: number;
}

export interface WaitProfile {
  samples: number;
  /** Mean backends of the database that were not idle. */
  busyMean: number;
  rows: WaitRow[];
}

/**
 * Samples the current database's non-idle client backends every `everyMs` until `stop()`:
 * state, wait event and the statement (or, idle in transaction, the last one), with its
 * parameters folded (`$1, $2` → `…`) and cut to 110 characters.
 */
export function sampleBackends(everyMs: number): { stop: () => Promise<WaitProfile> } {
  const counts = new Map<string, { state: string; wait: string; query: string; n: number }>();
  let samples = 0;
  let busy = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const rows = await all<{ state: string; wait: string; query: string; n: number }>(
          `SELECT state, COALESCE(wait_event_type || ':' || wait_event, '-') AS wait,
                  left(regexp_replace(regexp_replace(query, '\\$[0-9]+(, \\$[0-9]+)*', '…', 'g'), '\\s+', ' ', 'g'), 110) AS query, count(*)::int AS n
             FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle'
            GROUP BY 1, 2, 3`,
        );
        samples++;
        for (const r of rows) {
          busy += r.n;
          const key = `${r.state}|${r.wait}|${r.query}`;
          const c = counts.get(key) ?? { state: r.state, wait: r.wait, query: r.query, n: 0 };
          c.n += r.n;
          counts.set(key, c);
        }
      } catch {
        // a missed sample
      }
      await sleep(everyMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const rows = [...counts.values()]
        .map((c) => ({ state: c.state, wait: c.wait, query: c.query, mean: c.n / Math.max(1, samples) }))
        .sort((a, b) => b.mean - a.mean);
      return { samples, busyMean: busy / Math.max(1, samples), rows };
    },
  };
}

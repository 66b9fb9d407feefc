/**
 * The webhook bench's workspace and its events, in the bench database (run as a script by
 * main.ts with DATABASE_URL, REDIS_URL and QUEUE_PREFIX as bench/run.sh sets them; it
 * imports the service, whose configuration is read at import).
 *
 * - `tsx bench/webhooks/setup.ts <out.json> endpoints <urls.json>`: a fresh owner (one per
 *   round) registers a sandbox workspace through the service (`register`), then makes one
 *   endpoint per URL through the service (`createEndpoint`: the URL checks, the sealed
 *   secret, the cursor at its own creation event) subscribed to every event (`*`). Writes
 *   the workspace, each endpoint's id, secret and cursor.
 * - `tsx bench/webhooks/setup.ts <out.json> events <workspace> <n>`: in one transaction,
 *   n - 1 feed events by SQL (`deal.updated`, numbered after `last_event_seq`, which is
 *   moved to match) and a last one through `appendEvent`, whose nudge writes the outbox row
 *   `webhooks.dispatch` that starts the delivery after the commit, as any service write does.
 *   Writes the seq range and the commit time.
 */
import { writeFile } from 'node:fs/promises';
import { BENCH_EMAIL_DOMAIN, benchDb, closeBenchDb, refuseUnlessBenchDatabase, upsertUsers } from '../lib/db.js';
import { isMain } from '../lib/procs.js';

export interface EndpointMade {
  id: string;
  url: string;
  secret: string;
  /** The last seq the endpoint is done with when made (it receives every later event). */
  cursor: number;
}

export interface EndpointsOut {
  workspaceId: string;
  endpoints: EndpointMade[];
}

export interface EventsOut {
  first: number;
  last: number;
  /** Date.now() just after the commit. */
  committedAt: number;
}

async function endpoints(urls: string[]): Promise<EndpointsOut> {
  const { register } = await import('../../shared/enterprise/service.js');
  const { createEndpoint } = await import('../../shared/webhooks/service.js');
  const db = await benchDb();
  const now = new Date();
  const tag = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const name = `Bench webhooks ${tag}`;
  const [userId] = await upsertUsers(
    [{ email: `bench_wh_${tag}@${BENCH_EMAIL_DOMAIN}`, username: `bench_wh_${tag}`, full_name: name, kyc_status: 'verified', email_verified_at: now, created_at: now, updated_at: now }],
    { status: 'active', role: 'user' },
  );
  const made = await register(
    { userId: userId!, userName: name },
    { legal_name: `PT ${name}`, display_name: name, entity_type: 'pt', nib: '1234567890123', country_code: 'ID' },
    { ip: '127.0.0.1' },
  );
  const actor = { userId: userId!, userName: name, workspaceId: made.workspace.id, memberId: made.membership.id, role: 'owner' as const };
  const out: EndpointMade[] = [];
  for (const url of urls) {
    const { endpoint, secret } = await createEndpoint(actor, { url, events: ['*'], description: 'bench receiver' });
    const row = await db('webhook_endpoints').where({ id: endpoint.id }).first<{ cursor_seq: string }>('cursor_seq');
    out.push({ id: endpoint.id, url, secret, cursor: Number(row.cursor_seq) });
  }
  return { workspaceId: made.workspace.id, endpoints: out };
}

async function events(workspaceId: string, n: number): Promise<EventsOut> {
  const { appendEvent } = await import('../../shared/enterprise/events.js');
  const db = await benchDb();
  const range = await db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: { first: string }[] }>(
      `UPDATE workspaces SET last_event_seq = last_event_seq + ? WHERE id = ? RETURNING last_event_seq - ? + 1 AS first`,
      [n - 1, workspaceId, n - 1],
    );
    const first = Number(rows[0]!.first);
    await trx.raw(
      `INSERT INTO workspace_events (workspace_id, seq, event, entity_type, entity_id, summary, livemode, created_at)
       SELECT ?, s, 'deal.updated', 'deal', gen_random_uuid(), 'Bench event ' || s, false, now()
         FROM generate_series(?::bigint, ?::bigint) AS s`,
      [workspaceId, first, first + n - 2],
    );
    const last = await appendEvent(trx, workspaceId, { event: 'deal.updated', entityType: 'deal', summary: 'Bench event (last)', sandbox: true });
    return { first, last: Number(last.seq) };
  });
  return { ...range, committedAt: Date.now() };
}

async function main(): Promise<void> {
  const [out, mode, a, b] = process.argv.slice(2);
  refuseUnlessBenchDatabase(/_bench$/, 'webhooks setup');
  let result: EndpointsOut | EventsOut;
  if (out && mode === 'endpoints' && a) result = await endpoints(JSON.parse(a) as string[]);
  else if (out && mode === 'events' && a && b) result = await events(a, Number(b));
  else throw new Error('usage: tsx bench/webhooks/setup.ts <out.json> endpoints <urls-json> | events <workspace> <n>');
  await writeFile(out, JSON.stringify(result), { mode: 0o600 });
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`webhooks setup failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}

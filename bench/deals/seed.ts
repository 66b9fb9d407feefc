/**
 * The callers of the deals bench, in the bench database. `seedDeals()` runs this file as a
 * script (`tsx bench/deals/seed.ts <out.json> <users>`, with DATABASE_URL, REDIS_URL and
 * QUEUE_PREFIX as bench/run.sh sets them) and reads back what it wrote:
 *
 * - `users` users `bench_deal_u0001`…, each the owner of one workspace made through the
 *   service (`register`, as `POST /v1/enterprise/register` makes it: the workspace, the
 *   owner's membership, the KYB draft, `workspace.created`), a sandbox workspace since no
 *   KYB is approved, with one counterparty (`createCounterparty`, as the route does);
 * - a fresh dashboard session for each (`createSession`, as sign-in makes it: cookie and
 *   CSRF token), the one credential `GET /v1/enterprise/me` accepts (dashboard only), used
 *   for all three routes.
 *
 * Idempotent: users are found by e-mail and created only when missing, a workspace and a
 * counterparty only when the user has none (deals pile up in the workspaces run after run;
 * nothing is deleted but the bench users' earlier sessions). The Redis counters of the
 * shared per-user limit, of failed credentials and of the fee preview's 60 per minute are
 * deleted. Cookies go to a temporary file (mode 0600).
 */
import { writeFile } from 'node:fs/promises';
import { BENCH_EMAIL_DOMAIN, benchDb, closeBenchDb, deleteRedisKeys, inPool, refuseUnlessBenchDatabase, upsertUsers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export interface DealCaller {
  userId: string;
  workspaceId: string;
  counterpartyId: string;
  /** `Cookie` header value (`<session cookie name>=<token>`). */
  cookie: string;
  csrf: string;
}

export interface DealSeed {
  callers: DealCaller[];
  /** Workspaces and counterparties made by this seed run (0 when earlier runs made them). */
  workspacesCreated: number;
  counterpartiesCreated: number;
}

export async function seedDeals(env: NodeJS.ProcessEnv, users: number): Promise<DealSeed> {
  const seed = await runJsonScript<DealSeed>('bench/deals/seed.ts', [String(users)], env, 300_000);
  if (seed.callers.length !== users) throw new Error(`seed wrote ${seed.callers.length} callers, expected ${users}`);
  return seed;
}

/** Redis counters the bench clears: the shared per-user limit, failed credentials, the fee preview's limit. */
export const counterPatterns = (prefix: string): string[] => [`${prefix}:rl:authenticated:*`, `${prefix}:authfail:*`, `${prefix}:rl:ent-fee-preview*`];

// ---- The script ------------------------------------------------------------------------

const PARALLEL = 6;
export const COUNTERPARTY_NAME = 'PT Bench Mitra';

async function main(): Promise<void> {
  const [out, usersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/deals/seed.ts <out.json> <users>');
  const count = Number(usersArg);
  if (!Number.isInteger(count) || count < 2 || count > 9999) throw new Error('users must be an integer in 2..9999');
  refuseUnlessBenchDatabase(/_bench$/, 'seed');
  const { config } = await import('../../shared/config.js');
  const { register } = await import('../../shared/enterprise/service.js');
  const { createCounterparty } = await import('../../shared/enterprise/counterparties.js');
  const { createSession } = await import('../../shared/auth/sessions.js');
  const db = await benchDb();
  const started = Date.now();
  const now = new Date();
  const names = Array.from({ length: count }, (_, i) => `bench_deal_u${String(i + 1).padStart(4, '0')}`);
  const ids = await upsertUsers(
    names.map((username, i) => ({
      email: `${username}@${BENCH_EMAIL_DOMAIN}`,
      username,
      full_name: `Bench deal owner ${i + 1}`,
      kyc_status: 'verified',
      email_verified_at: now,
      created_at: now,
      updated_at: now,
    })),
    { status: 'active', role: 'user' },
  );
  await db('sessions').whereIn('user_id', ids).delete();

  let workspacesCreated = 0;
  let counterpartiesCreated = 0;
  const callers = await inPool(ids, PARALLEL, async (userId, i) => {
    const userName = `Bench deal owner ${i + 1}`;
    const owned = await db('workspace_members').where({ user_id: userId, role: 'owner', status: 'active' }).orderBy('created_at').first<{ workspace_id: string; id: string } | undefined>('workspace_id', 'id');
    let workspaceId: string;
    let memberId: string;
    if (owned) {
      workspaceId = owned.workspace_id;
      memberId = owned.id;
    } else {
      const made = await register(
        { userId, userName },
        { legal_name: `PT Bench Deals ${i + 1}`, display_name: `Bench Deals ${i + 1}`, entity_type: 'pt', nib: '1234567890123', country_code: 'ID' },
        { ip: '127.0.0.1' },
      );
      workspaceId = made.workspace.id;
      memberId = made.membership.id;
      workspacesCreated++;
    }
    const cp = await db('counterparties').where({ workspace_id: workspaceId, name: COUNTERPARTY_NAME }).first<{ id: string } | undefined>('id');
    let counterpartyId = cp?.id;
    if (!counterpartyId) {
      const actor = { workspaceId, memberId, userId, userName, role: 'owner' as const };
      counterpartyId = (await createCounterparty(undefined, actor, { name: COUNTERPARTY_NAME, country_code: 'ID', relationship: 'seller' })).id;
      counterpartiesCreated++;
    }
    const s = await createSession(db, userId, { ip: '127.0.0.1', userAgent: 'bench/deals' });
    return { userId, workspaceId, counterpartyId, cookie: `${config.sessionCookieName}=${s.token}`, csrf: s.csrfToken };
  });

  const cleared = await deleteRedisKeys(counterPatterns(config.queuePrefix));
  const seed: DealSeed = { callers, workspacesCreated, counterpartiesCreated };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-deals: ${count} owners (${workspacesCreated} workspaces and ${counterpartiesCreated} counterparties made now), ` +
      `fresh sessions for all, ${cleared} Redis counters cleared (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed-deals failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}

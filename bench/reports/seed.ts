/**
 * The reports bench's workspace, in the bench database. `seedReports()` runs this file as a
 * script (`tsx bench/reports/seed.ts <out.json> <deals> <members>`, with DATABASE_URL,
 * REDIS_URL and QUEUE_PREFIX as bench/run.sh sets them) and reads back what it wrote.
 *
 * - The owner `bench_rep_owner_<deals>` registers one workspace through the service
 *   (`register`, as `POST /v1/enterprise/register` makes it), which is then made live by SQL
 *   (`is_sandbox` false, KYB verified: what staff approval of its KYB ends in) and dated
 *   ~401 days back with its first events, so the feed's `seq` follows its times.
 * - `members` viewers (`bench_rep_<deals>_m0001`…) are added by SQL as active members: the
 *   summary (30 per minute) and the overview (60 per minute) have per-user limits no setting
 *   raises, so the load is spread over many users of the same workspace.
 * - In bulk, one statement per table in one transaction (generate_series, not the
 *   services): 50 KYB-verified counterparties with one verified payout instruction each;
 *   `deals` live deals created over the last ~400 days with 1-3 milestones each in a mix of
 *   statuses (states.ts: draft, awaiting_funding, funded, evidence_submitted, approved,
 *   released, disputed, cancelled; older deals mostly completed); their feed
 *   (deal.created, deal.updated on activation, deal.cancelled, milestone.funded,
 *   milestone.evidence_submitted, milestone.approved, milestone.released,
 *   milestone.disputed, with amounts), numbered by time after the workspace's own events
 *   (`last_event_seq` and `last_deal_number` set to match); an approve decision for 1 in 10
 *   milestones approved in the last ~120 days (a few thousand), and a payout for 1 in 5
 *   milestones released in the last ~45 days (settled, 1 in 25 failed). Then, on every run, `VACUUM (ANALYZE)` of the written tables and the rollups.
 * - Idempotent: when the workspace already has `deals` deals the bulk is skipped; every run
 *   makes fresh dashboard sessions (the earlier ones of these users deleted) and deletes the
 *   bench prefix's counters of the shared per-user limit, failed credentials, the summary's
 *   and the overview's limits, and the overview cache.
 */
import { writeFile } from 'node:fs/promises';
import { BENCH_EMAIL_DOMAIN, benchDb, closeBenchDb, deleteRedisKeys, inPool, one, refuseUnlessBenchDatabase, upsertUsers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export interface ReportCaller {
  userId: string;
  role: 'owner' | 'viewer';
  /** `Cookie` header value (`<session cookie name>=<token>`). */
  cookie: string;
}

export interface ReportSeed {
  workspaceId: string;
  /** The owner first, then the viewers. */
  callers: ReportCaller[];
  deals: number;
  milestones: number;
  events: number;
  decisions: number;
  disbursements: number;
  lastEventSeq: number;
  /** Whether this run made the bulk (false: an earlier run had). */
  seededNow: boolean;
  seedSeconds: number;
}

export async function seedReports(env: NodeJS.ProcessEnv, deals: number, members: number): Promise<ReportSeed> {
  const seed = await runJsonScript<ReportSeed>('bench/reports/seed.ts', [String(deals), String(members)], env, 1_800_000);
  if (seed.callers.length !== members + 1) throw new Error(`seed wrote ${seed.callers.length} callers, expected ${members + 1}`);
  return seed;
}

/** Redis keys the bench clears (its own prefix only). */
export const counterPatterns = (prefix: string): string[] => [
  `${prefix}:rl:authenticated:*`,
  `${prefix}:authfail:*`,
  `${prefix}:rl:ent-report-summary*`,
  `${prefix}:rl:ent-overview*`,
  `${prefix}:ent-overview:*`,
];

export const COUNTERPARTIES = 50;

/**
 * The bulk, as SQL over a plan of deals: `i` 1..N oldest first, a pseudo-random bucket per
 * deal choosing its story, k = 1-3 milestones, stage per milestone.
 * Stages: 0 draft, 1 awaiting_funding, 2 funded, 3 evidence_submitted, 4 approved,
 * 5 released, 6 disputed (after funding), 7 cancelled.
 */
const PLAN = `
  CREATE TEMP TABLE bench_plan ON COMMIT DROP AS
  SELECT i, gen_random_uuid() AS id, k, bucket, age,
         now() - make_interval(secs => age * 86400) AS created_at,
         least(1.0, age / 13.0) AS pace
    FROM (SELECT i, 1 + (i * 7 % 3) AS k,
                 CASE WHEN age > 45 AND b BETWEEN 8 AND 44 AND b % 4 <> 0 THEN 99 ELSE b END AS bucket, age
            FROM (SELECT i, ((i::bigint * 2654435761) % 100)::int AS b,
                         (400.0 * (:n - i) / :n + ((i * 7919) % 1000) / 100000.0)::float8 AS age
                    FROM generate_series(1, :n) AS i) s) t`;

const MILESTONE_PLAN = `
  CREATE TEMP TABLE bench_mplan ON COMMIT DROP AS
  SELECT p.i, p.id AS deal_id, gen_random_uuid() AS id, j, p.created_at, p.pace,
         (1000 + ((p.i::bigint * 31 + j * 17) * 2654435761) % 49000) * 1000 AS amount,
         CASE
           WHEN p.bucket < 4 THEN 0
           WHEN p.bucket < 8 THEN 7
           WHEN p.bucket < 12 THEN 1
           WHEN p.bucket < 20 THEN CASE WHEN j = 1 THEN 2 ELSE 1 END
           WHEN p.bucket < 26 THEN CASE WHEN j = 1 THEN 3 ELSE 2 END
           WHEN p.bucket < 30 THEN CASE WHEN j = 1 THEN 4 ELSE 2 END
           WHEN p.bucket < 33 THEN CASE WHEN j = 1 THEN 6 ELSE 2 END
           WHEN p.bucket < 45 THEN CASE WHEN j = 1 THEN 5 ELSE 2 END
           ELSE 5
         END AS stage
    FROM bench_plan p, generate_series(1, p.k) AS j`;

/** When each step of milestone j happened: days after the deal's creation, scaled down for young deals so nothing is in the future. */
const at = (days: number) => `m.created_at + make_interval(secs => ${days} * (1 + (m.j - 1) * 0.5) * m.pace * 86400)`;

async function bulk(workspaceId: string, ownerId: string, ownerName: string, n: number): Promise<void> {
  const db = await benchDb();
  await db.transaction(async (t) => {
    const raw = (sql: string, b: Record<string, unknown> = {}) => t.raw(sql, { n, ws: workspaceId, owner: ownerId, owner_name: ownerName, ...b });
    await raw(`SET LOCAL work_mem = '256MB'`);
    await raw(PLAN.replace(/:n\b/g, String(n)));
    await raw(MILESTONE_PLAN);
    await raw(
      `INSERT INTO counterparties (workspace_id, name, country_code, relationship, email, kyb_status, created_by, created_at, updated_at)
       SELECT :ws, 'PT Bench Mitra ' || lpad(c::text, 2, '0'), 'ID', 'seller', 'mitra' || c || '@bench.invalid', 'verified', :owner,
              now() - interval '401 days', now() - interval '401 days'
         FROM generate_series(1, ${COUNTERPARTIES}) AS c`,
    );
    await raw(
      `INSERT INTO payout_instructions (workspace_id, counterparty_id, label, bank_name, account_holder, account_number_sealed, account_number_last4,
                                        status, verified_at, verified_by, verification_signature, created_by, created_at, updated_at, pending_since)
       SELECT :ws, c.id, 'Main account', 'Bank Bench', c.name, 'bench-not-a-sealed-number', lpad((row_number() OVER (ORDER BY c.name))::text, 4, '0'),
              'verified', c.created_at, :owner, 'bench-not-a-signature', :owner, c.created_at, c.created_at, c.created_at
         FROM counterparties c WHERE c.workspace_id = :ws`,
    );
    await raw(
      `CREATE TEMP TABLE bench_cp ON COMMIT DROP AS
       SELECT c.id, p.id AS instruction_id, (row_number() OVER (ORDER BY c.name) - 1)::int AS n
         FROM counterparties c JOIN payout_instructions p ON p.counterparty_id = c.id WHERE c.workspace_id = '${workspaceId}'`,
    );
    await raw(
      `INSERT INTO deals (id, workspace_id, reference, title, currency, counterparty_id, owner_id, is_test, activated_at, cancelled_at,
                          fee_rate_bp, fee_min, fee_volume_basis, fee_allocation, fee_buyer_percent, platform_fee, buyer_fee, seller_fee, fee_frozen,
                          created_at, updated_at)
       SELECT p.id, :ws, 'DL-' || lpad(p.i::text, 6, '0'), 'Bench order ' || p.i, 'IDR', cp.id, :owner, false,
              CASE WHEN p.bucket >= 4 THEN p.created_at + interval '1 hour' * p.pace END,
              CASE WHEN p.bucket BETWEEN 4 AND 7 THEN p.created_at + interval '2 days' * p.pace END,
              100, 0, s.total, 'buyer', 100, s.total / 100, s.total / 100, 0, p.bucket >= 4, p.created_at, p.created_at
         FROM bench_plan p
         JOIN (SELECT deal_id, sum(amount) AS total FROM bench_mplan GROUP BY deal_id) s ON s.deal_id = p.id
         JOIN bench_cp cp ON cp.n = p.i % ${COUNTERPARTIES}`,
    );
    await raw(
      `INSERT INTO deal_milestones (id, deal_id, workspace_id, sequence_no, title, amount, status, funded_at, funding_method, evidence_summary,
                                    evidence_submitted_at, evidence_submitted_by, approved_at, released_at, disputed_at, dispute_reason,
                                    approvals_required, buyer_fee, seller_fee, funding_amount, payout_amount, created_at, updated_at)
       SELECT m.id, m.deal_id, :ws, m.j, 'Stage ' || m.j, m.amount,
              (ARRAY['draft','awaiting_funding','funded','evidence_submitted','approved','released','disputed','cancelled'])[m.stage + 1],
              CASE WHEN m.stage IN (2,3,4,5,6) THEN ${at(1)} END, CASE WHEN m.stage IN (2,3,4,5,6) THEN 'bank_transfer' END,
              CASE WHEN m.stage IN (3,4,5) THEN 'Delivered' END,
              CASE WHEN m.stage IN (3,4,5) THEN ${at(4)} END, CASE WHEN m.stage IN (3,4,5) THEN :owner::uuid END,
              CASE WHEN m.stage IN (4,5) THEN ${at(5)} END, CASE WHEN m.stage = 5 THEN ${at(6)} END,
              CASE WHEN m.stage = 6 THEN ${at(5)} END, CASE WHEN m.stage = 6 THEN 'Goods not as described' END,
              1, m.amount / 100, 0, m.amount + m.amount / 100, m.amount, m.created_at, m.created_at
         FROM bench_mplan m`,
    );
    // The feed: every step of every deal, numbered by time after the workspace's own events.
    await raw(
      `INSERT INTO workspace_events (workspace_id, seq, event, entity_type, entity_id, deal_id, deal_reference, actor_id, actor_name, amount, summary, livemode, created_at)
       SELECT :ws, w.last_event_seq + row_number() OVER (ORDER BY e.created_at, e.deal_id, e.ord),
              e.event, e.entity_type, e.entity_id, e.deal_id, e.ref, :owner, :owner_name, e.amount, e.summary, true, e.created_at
         FROM workspaces w,
              (SELECT d.id AS deal_id, d.reference AS ref, 'deal.created' AS event, 'deal' AS entity_type, d.id AS entity_id,
                      d.fee_volume_basis AS amount, 'Deal ' || d.reference || ' created' AS summary, d.created_at, 0 AS ord
                 FROM deals d WHERE d.workspace_id = :ws
               UNION ALL
               SELECT d.id, d.reference, 'deal.updated', 'deal', d.id, NULL, 'Deal ' || d.reference || ' activated', d.activated_at, 1
                 FROM deals d WHERE d.workspace_id = :ws AND d.activated_at IS NOT NULL
               UNION ALL
               SELECT d.id, d.reference, 'deal.cancelled', 'deal', d.id, NULL, 'Deal ' || d.reference || ' cancelled', d.cancelled_at, 2
                 FROM deals d WHERE d.workspace_id = :ws AND d.cancelled_at IS NOT NULL
               UNION ALL
               SELECT m.deal_id, d.reference, x.event, 'milestone', m.id, x.amount,
                      'Milestone ' || m.sequence_no || ' of deal ' || d.reference || ' ' || x.word, x.at, 2 + m.sequence_no * 10 + x.ord
                 FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
                 CROSS JOIN LATERAL (VALUES ('milestone.funded', m.funding_amount, 'funded', m.funded_at, 1),
                                            ('milestone.evidence_submitted', NULL::bigint, 'evidence submitted', m.evidence_submitted_at, 2),
                                            ('milestone.approved', NULL::bigint, 'approved', m.approved_at, 3),
                                            ('milestone.released', m.payout_amount, 'released in 1 payout', m.released_at, 4),
                                            ('milestone.disputed', m.funding_amount, 'disputed', m.disputed_at, 5)) AS x(event, amount, word, at, ord)
                WHERE m.workspace_id = :ws AND x.at IS NOT NULL) e
        WHERE w.id = :ws`,
    );
    await raw(
      `INSERT INTO milestone_decisions (milestone_id, deal_id, workspace_id, round, decision, decided_by, note, decided_at)
       SELECT m.id, m.deal_id, :ws, 1, 'approve', :owner, NULL, m.approved_at
         FROM deal_milestones m WHERE m.workspace_id = :ws AND m.approved_at > now() - interval '120 days' AND hashtext(m.id::text) % 10 = 0`,
    );
    await raw(
      `INSERT INTO disbursements (workspace_id, deal_id, milestone_id, payout_instruction_id, instruction_label,
                                  destination_bank_name, destination_account_holder, destination_account_last4, amount, currency, is_test,
                                  release_no, split_no, status, attempts, provider_reference, failure_reason, settled_at, failed_at, created_at, updated_at)
       SELECT :ws, m.deal_id, m.id, cp.instruction_id, 'Main account', pi.bank_name, pi.account_holder, pi.account_number_last4, m.payout_amount, 'IDR', false, 1, 1,
              CASE WHEN f THEN 'failed' ELSE 'settled' END, 1, 'bench-' || m.id,
              CASE WHEN f THEN 'Account closed' END,
              CASE WHEN NOT f THEN m.released_at + interval '1 hour' END, CASE WHEN f THEN m.released_at + interval '1 hour' END,
              m.released_at, m.released_at + interval '1 hour'
         FROM (SELECT m.*, (hashtext(m.id::text || 'f') % 25 = 0) AS f FROM deal_milestones m
                WHERE m.workspace_id = :ws AND m.released_at > now() - interval '45 days' AND hashtext(m.id::text) % 5 = 0) m
         JOIN deals d ON d.id = m.deal_id JOIN bench_cp cp ON cp.id = d.counterparty_id JOIN payout_instructions pi ON pi.id = cp.instruction_id`,
    );
    await raw(
      `UPDATE workspaces SET last_deal_number = :n, updated_at = now(),
              last_event_seq = (SELECT max(seq) FROM workspace_events WHERE workspace_id = :ws)
        WHERE id = :ws`,
    );
  });
}

/**
 * The workspace's ledger (issue 44: the reconciliation reads it), when it has none yet: one
 * journal entry per funded milestone (`bench-seed:<id>`, reference `deal_milestone`) whose
 * lines are what its deal and payouts imply (shared/reconciliation/repo.ts: funding received,
 * the milestone's own account, buyer fees held, payouts in flight and sent, fees, refunds),
 * balanced on `system:adjustments` by what the seed leaves out (released milestones older
 * than 45 days have no payout rows). Ledger and deals agree on every figure: the bench
 * database is shared with the other benches, whose global ledger check must hold (three
 * planted one-rupiah differences failed bench:deals' check at 61ffb42). That the
 * reconciliation finds differences is shown by its tests (test/integration/reconciliation/).
 * Real flows post two to four entries per milestone; the reconciliation's reads only work out
 * the milestones a write marked, and the migration's marks are dealt with here (the nightly pass).
 */
async function seedLedger(workspaceId: string): Promise<boolean> {
  const db = await benchDb();
  const has = await one<{ n: string }>(
    `SELECT count(*) AS n FROM journal_entries
      WHERE posting_key = 'bench-seed:' || (SELECT id FROM deal_milestones WHERE workspace_id = ? AND funded_at IS NOT NULL ORDER BY id LIMIT 1)`,
    [workspaceId],
  );
  if (Number(has.n) > 0) return false;
  const { ensureAccounts, accountSpec } = await import('../../shared/ledger/accounts.js');
  await db.transaction(async (t) => {
    await ensureAccounts(t, [
      accountSpec({ system: 'enterpriseFunding', currency: 'IDR' }),
      accountSpec({ system: 'enterpriseFeesHeld', currency: 'IDR' }),
      accountSpec({ system: 'enterprisePayoutsInFlight', currency: 'IDR' }),
      accountSpec({ system: 'enterprisePayoutsSent', currency: 'IDR' }),
      accountSpec({ system: 'enterpriseFees', currency: 'IDR' }),
      accountSpec({ system: 'enterpriseRefunds', currency: 'IDR' }),
      accountSpec({ system: 'adjustments' }),
    ]);
    const raw = (sql: string) => t.raw(sql, { ws: workspaceId });
    await raw(`SET LOCAL work_mem = '256MB'`);
    await raw(
      `INSERT INTO ledger_accounts (code, kind, allow_negative, currency, created_at)
       SELECT 'milestone:' || m.id, 'escrow', false, 'IDR', now() FROM deal_milestones m WHERE m.workspace_id = :ws AND m.funded_at IS NOT NULL
       ON CONFLICT (code) DO NOTHING`,
    );
    await raw(
      `CREATE TEMP TABLE bench_books ON COMMIT DROP AS
       SELECT nextval(pg_get_serial_sequence('journal_entries', 'id')) AS entry_id, x.*
         FROM (SELECT m.id, coalesce(m.released_at, m.funded_at) AS at, m.funding_amount AS funded,
                      CASE WHEN m.status IN ('funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed') THEN m.amount - m.refunded_amount
                           WHEN m.status = 'released' THEN m.returned_amount ELSE 0 END AS held,
                      CASE WHEN m.status IN ('funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed') THEN m.buyer_fee ELSE 0 END AS buyer_fees_held,
                      coalesce(p.in_flight, 0) AS in_flight, coalesce(p.paid_out, 0) AS paid_out,
                      CASE WHEN m.status = 'released' THEN m.buyer_fee + m.seller_fee ELSE 0 END AS fees,
                      m.refunded_amount AS refunds
                 FROM deal_milestones m
                 LEFT JOIN (SELECT milestone_id, sum(amount) FILTER (WHERE status IN ('queued', 'processing')) AS in_flight,
                                   sum(amount) FILTER (WHERE status = 'settled') AS paid_out
                              FROM disbursements WHERE workspace_id = :ws GROUP BY milestone_id) p ON p.milestone_id = m.id
                WHERE m.workspace_id = :ws AND m.funded_at IS NOT NULL) x`,
    );
    await raw(
      `INSERT INTO journal_entries (id, kind, ref_type, ref_id, posting_key, memo, created_at) OVERRIDING SYSTEM VALUE
       SELECT entry_id, 'bench.seed', 'deal_milestone', id::text, 'bench-seed:' || id, 'Bench seed: the books of milestone ' || id, at FROM bench_books`,
    );
    await raw(
      `INSERT INTO journal_lines (entry_id, account_id, amount)
       SELECT b.entry_id, a.id, l.amount
         FROM bench_books b
        CROSS JOIN LATERAL (VALUES ('enterprise:funding_received', -b.funded), ('milestone:' || b.id, b.held),
                                   ('enterprise:buyer_fees_held', b.buyer_fees_held), ('enterprise:payouts_in_flight', b.in_flight),
                                   ('enterprise:payouts_sent', b.paid_out), ('platform:enterprise_fees', b.fees),
                                   ('enterprise:refunds_sent', b.refunds),
                                   ('system:adjustments', b.funded - b.held - b.buyer_fees_held - b.in_flight - b.paid_out - b.fees - b.refunds)) AS l(code, amount)
         JOIN ledger_accounts a ON a.code = l.code
        WHERE l.amount <> 0`,
    );
  });
  return true;
}

/**
 * `VACUUM (ANALYZE)` of what the seed writes, its rollups included (`deal_statuses`,
 * `report_event_days`, `report_approvals`, kept by triggers as the bulk inserts and updates
 * run), on every run: autovacuum is off on this server, and in production it would have
 * done both. Without it the rollups kept the statistics of empty tables (a 91,000-row
 * group sorted on disk, planned for 4 rows) and no visibility map, so the summary's
 * index-only scans read the heap: the 366-day summary's p95 was 344 ms at 4f00c47.
 */
const WRITTEN = ['journal_entries', 'journal_lines', 'ledger_accounts', 'deals', 'deal_milestones', 'workspace_events', 'milestone_decisions', 'disbursements', 'counterparties', 'payout_instructions', 'deal_statuses', 'report_event_days', 'report_approvals'];

// ---- The script ------------------------------------------------------------------------

async function main(): Promise<void> {
  const [out, dealsArg, membersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/reports/seed.ts <out.json> <deals> <members>');
  const n = Number(dealsArg);
  const members = Number(membersArg);
  if (!Number.isInteger(n) || n < 1000 || n > 999_999) throw new Error('deals must be an integer in 1000..999999');
  if (!Number.isInteger(members) || members < 1 || members > 9999) throw new Error('members must be an integer in 1..9999');
  refuseUnlessBenchDatabase(/_bench$/, 'seed');
  const { config } = await import('../../shared/config.js');
  const { register } = await import('../../shared/enterprise/service.js');
  const { createSession } = await import('../../shared/auth/sessions.js');
  const db = await benchDb();
  const started = Date.now();
  const now = new Date();
  const ownerName = `Bench report owner ${n}`;
  const user = (username: string, full_name: string) => ({
    email: `${username}@${BENCH_EMAIL_DOMAIN}`,
    username,
    full_name,
    kyc_status: 'verified',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  });
  const [ownerId] = await upsertUsers([user(`bench_rep_owner_${n}`, ownerName)], { status: 'active', role: 'user' });
  const viewerNames = Array.from({ length: members }, (_, i) => `bench_rep_${n}_m${String(i + 1).padStart(4, '0')}`);
  const viewerIds = await upsertUsers(
    viewerNames.map((u, i) => user(u, `Bench report viewer ${i + 1}`)),
    { status: 'active', role: 'user' },
  );

  const owned = await db('workspace_members').where({ user_id: ownerId!, role: 'owner', status: 'active' }).orderBy('created_at').first<{ workspace_id: string } | undefined>('workspace_id');
  let workspaceId = owned?.workspace_id;
  if (!workspaceId) {
    const made = await register(
      { userId: ownerId!, userName: ownerName },
      { legal_name: `PT Bench Reports ${n}`, display_name: `Bench Reports ${n}`, entity_type: 'pt', nib: '1234567890123', country_code: 'ID' },
      { ip: '127.0.0.1' },
    );
    workspaceId = made.workspace.id;
  }
  // Live (what staff approval of its KYB ends in) and as old as its deals; every run, so an interrupted first run is completed.
  const old = `now() - interval '401 days'`;
  await db.raw(`UPDATE workspaces SET is_sandbox = false, kyb_status = 'verified', created_at = ${old} WHERE id = ?`, [workspaceId]);
  await db.raw(`UPDATE workspace_members SET created_at = ${old}, joined_at = ${old} WHERE workspace_id = ? AND user_id = ?`, [workspaceId, ownerId!]);
  await db.raw(`UPDATE workspace_events SET created_at = ${old} WHERE workspace_id = ? AND deal_id IS NULL AND created_at > ${old}`, [workspaceId]);
  const present = new Set((await db('workspace_members').where({ workspace_id: workspaceId }).whereIn('user_id', viewerIds).select<{ user_id: string }[]>('user_id')).map((r) => r.user_id));
  const missing = viewerIds.filter((id) => !present.has(id));
  if (missing.length > 0) {
    await db('workspace_members').insert(
      missing.map((user_id) => ({ workspace_id: workspaceId, user_id, role: 'viewer', status: 'active', invited_by: ownerId, joined_at: now, created_at: now, updated_at: now })),
    );
  }

  const count = async () => Number((await one<{ n: string }>(`SELECT count(*) AS n FROM deals WHERE workspace_id = ?`, [workspaceId])).n);
  let seededNow = false;
  const had = await count();
  if (had < n) {
    if (had > 0) throw new Error(`the bench workspace ${workspaceId} has ${had} deals, neither 0 nor ${n}: not a state this seed makes (one transaction)`);
    console.log(`seed-reports: ${n} deals and their feed, in bulk (one transaction)…`);
    await bulk(workspaceId, ownerId!, ownerName, n);
    seededNow = true;
  }
  const ledgerNow = await seedLedger(workspaceId);
  if (ledgerNow) {
    // What the nightly pass would have done by now: every milestone's figures worked out and kept.
    const { reconcile } = await import('../../shared/reconciliation/service.js');
    const r = await reconcile(workspaceId, { full: true });
    console.log(`seed-reports: ledger posted; reconciliation kept for every milestone (${r.differences.length} differences)`);
  }
  await db.raw(`VACUUM (ANALYZE) ${WRITTEN.join(', ')}, reconciliation_figures, reconciliation_marks`);
  const seedSeconds = (Date.now() - started) / 1000;

  const ids = [ownerId!, ...viewerIds];
  await db('sessions').whereIn('user_id', ids).delete();
  const callers = await inPool(ids, 8, async (userId, i) => {
    const s = await createSession(db, userId, { ip: '127.0.0.1', userAgent: 'bench/reports' });
    return { userId, role: i === 0 ? ('owner' as const) : ('viewer' as const), cookie: `${config.sessionCookieName}=${s.token}` };
  });
  const cleared = await deleteRedisKeys(counterPatterns(config.queuePrefix));

  const figures = await one<{ deals: number; milestones: number; events: number; decisions: number; disbursements: number; last: string; max: string | null }>(
    `SELECT (SELECT count(*)::int FROM deals WHERE workspace_id = :ws) AS deals,
            (SELECT count(*)::int FROM deal_milestones WHERE workspace_id = :ws) AS milestones,
            (SELECT count(*)::int FROM workspace_events WHERE workspace_id = :ws) AS events,
            (SELECT count(*)::int FROM milestone_decisions WHERE workspace_id = :ws) AS decisions,
            (SELECT count(*)::int FROM disbursements WHERE workspace_id = :ws) AS disbursements,
            (SELECT last_event_seq FROM workspaces WHERE id = :ws) AS last,
            (SELECT max(seq) FROM workspace_events WHERE workspace_id = :ws) AS max`.replace(/:ws/g, '?'),
    Array(7).fill(workspaceId),
  );
  if (String(figures.last) !== String(figures.max)) throw new Error(`workspaces.last_event_seq ${figures.last} differs from the feed's max seq ${String(figures.max)}`);
  const seed: ReportSeed = {
    workspaceId,
    callers,
    deals: figures.deals,
    milestones: figures.milestones,
    events: figures.events,
    decisions: figures.decisions,
    disbursements: figures.disbursements,
    lastEventSeq: Number(figures.last),
    seededNow,
    seedSeconds,
  };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-reports: workspace ${workspaceId}: ${figures.deals} deals, ${figures.milestones} milestones, ${figures.events} events (last seq ${figures.last}), ` +
      `${figures.decisions} decisions, ${figures.disbursements} disbursements${seededNow ? ' made now' : ' (already there)'} in ${seedSeconds.toFixed(1)} s; ` +
      `${ids.length} fresh sessions, ${cleared} Redis keys cleared`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed-reports failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}

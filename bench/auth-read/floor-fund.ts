/**
 * The floor of the enterprise money path of issue 29: `POST /v1/enterprise/deals/:id/
 * milestones/:mid/fund` (sandbox) and `POST .../release` into payout splits, done by hand
 * with node-postgres named (server-side prepared) statements and ioredis, for
 * bench/fund/. Nothing of the service is imported: the SQL, the checks, the signatures,
 * the event and mail texts and the serialisers below are copied ON PURPOSE from
 * api/middleware/{enterprise-auth,rate-limit,idempotency,overview-cache}.ts,
 * shared/enterprise/{access,keys-repo,events,mail}.ts, shared/webhooks/nudge.ts,
 * shared/deals/{lock,moves,states,serialize,extras,read,mail}.ts,
 * shared/payouts/{release,instructions,signature}.ts, shared/crypto.ts, shared/outbox.ts,
 * shared/mail/service.ts and shared/idempotency.ts, so the floor writes the same rows and
 * answers the same JSON.
 *
 * Both routes are `auth: false` in the floor server: the enterprise authentication is done
 * here, as enterpriseAuth does it for an `rpe_` workspace key:
 *  - SHA-256 of the key, the API's one statement joining the key to its creator's
 *    membership, workspace and account (live keys only); an unknown key or an inactive
 *    creator counts a failed credential (address and key prefix, one Redis script) and
 *    answers 401 INVALID_TOKEN (429 past AUTH_FAILURE_LIMIT);
 *  - last use recorded at most once a minute (synchronous_commit off, as bookkeepingWrite);
 *  - 403 SUSPENDED / ACCOUNT_INACTIVE for the creator's account; SCOPE_REQUIRED without the
 *    write scope; INVALID_ACCOUNT / NO_WORKSPACE for X-Enterprise-Account; FORBIDDEN below
 *    finance (a read+write key acts with its creator's role);
 *  - one Redis script for the limits the API checks in two round trips: the address's
 *    failed-credential counter, the shared per-user limit (AUTH_RATE_LIMIT_PER_MINUTE) and,
 *    once access is granted, the route's own per-user limit (ENTERPRISE_MONEY_LIMIT_PER_MINUTE,
 *    `ent-fund` / `ent-release`): the same counters, under the floor's prefix.
 *
 * Round trips (issue 43: a floor is at least as lean as its route; the bench counts both
 * sides in its verify step and stops when the floor sends more). Every value is bound: named
 * statements on a pool of the floor's own with node-postgres pipelining (`pipeline: true`),
 * statements sent together travelling in one flight, as the API's keyed transactions do
 * (decision 0025). Until issue 43 this floor sent 12 round trips per flow (fund 5, release 7,
 * `BEGIN` folded with literals inlined) against the API's 9, and its ratio flattered the API.
 *
 * Fund (keyed), 3 round trips: the key lookup; BEGIN, the key's lock and stored row
 * (`idempotency_open`, the API's function) with the workspace row and the deal (with its
 * names) locked FOR UPDATE in one statement, and the deal's milestones (run after the locks),
 * in one flight; one CTE (the milestone's compare-and-set awaiting_funding -> funded, the
 * workspace's event seq, the `milestone.funded` event, the `webhooks.dispatch` nudge when the
 * workspace has an active endpoint, the completed key row with the answer) with COMMIT, in
 * one flight (the milestone was read under the deal's lock, so its compare-and-set moves;
 * the CTE writes nothing unless it did). Then the caller's cached overview deleted.
 *
 * Release (keyed), 4 round trips: the key lookup; BEGIN, key lock + workspace + deal, and one
 * statement reading the milestones, the named payout instructions FOR SHARE (id order), the
 * milestone's last release number, the members the release mail goes to and whether the
 * workspace has an active webhook endpoint, in one flight; the checks (approved, splits
 * adding up to payout_amount - refunded_amount, each instruction once, of the workspace and
 * the deal's counterparty, verified, its sealed number opened and its verification signature
 * and last four matching); one CTE writing the milestone's compare-and-set approved ->
 * released, the disbursements (each signed), the outbox rows in the API's order
 * (payouts.disburse per split, webhooks.dispatch when due, mail.send per mail), the sealed
 * mails, the seq and the three events, with the deal's detail read after it, in one flight;
 * the completed key row with COMMIT, in one flight. Then the overview deleted.
 *
 * Not reproduced (the bench never asks; each answers as stated, never a wrong write):
 * sessions and personal keys on these routes (401 UNAUTHORIZED: the bench sends workspace
 * keys); a second release of returned payouts (409 INVALID_STATE here; the API sends the
 * returned amount again); live workspaces' fund refusal is reproduced, but live releases
 * (ledger postings) are not (500 here: the bench's workspaces are sandboxes, whose releases
 * post nothing); documents in a deal's answer (500 here: the bench's milestones have none);
 * joi's error details (a bad body is a bare 400 INVALID_BODY); request ids, security
 * headers, metrics, the access log.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import type Koa from 'koa';
import pg from 'pg';
import type { FloorModule, FloorRoute, FloorStores } from './floor-routes.js';
import { canonicalJson, fail, IDEMPOTENCY_TTL_MS, parseJson, rawBody, replayStored, sha256Hex, UUID, UUID_V4 } from './floor-common.js';

// ---- Configuration (the API's environment) -------------------------------------------------

const env = process.env;
const AUTH_LIMIT = Number(env.AUTH_RATE_LIMIT_PER_MINUTE ?? '300');
const MONEY_LIMIT = Number(env.ENTERPRISE_MONEY_LIMIT_PER_MINUTE ?? '30');
const FAILURE_LIMIT = Number(env.AUTH_FAILURE_LIMIT ?? '20');
/** api/middleware/rate-limit.ts: failed credentials per key prefix and window. */
const KEY_PREFIX_FAILURE_LIMIT = 50;
const FAILURE_WINDOW_MS = 15 * 60_000;
const TOUCH_INTERVAL_MS = 60_000;
/** The floor's own Redis prefix for its limit counters (the floor server's, plus `:ent`). */
const PREFIX = `${env.FLOOR_PREFIX ?? 'bench-floor'}:ent`;
/** The API's own overview cache keys (api/middleware/overview-cache.ts clears them after a write). */
const QUEUE_PREFIX = env.QUEUE_PREFIX ?? 'escrow';
/** shared/config.ts: ENCRYPTION_KEY, or the development key. */
const ENCRYPTION_KEY = env.ENCRYPTION_KEY ? Buffer.from(env.ENCRYPTION_KEY, 'base64') : Buffer.alloc(32, 'escrow-local-development-key');
if (ENCRYPTION_KEY.length !== 32) throw new Error('floor-fund: ENCRYPTION_KEY must be 32 bytes, base64-encoded');

const ROLES = ['viewer', 'operator', 'finance', 'admin', 'owner'] as const;
type Role = (typeof ROLES)[number];
const rankOf = (r: Role) => ROLES.indexOf(r);
const BEARER = /^Bearer\s+(\S+)\s*$/i;

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

// ---- Crypto (shared/crypto.ts, shared/payouts/signature.ts) --------------------------------

function encryptSecret(plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', ENCRYPTION_KEY, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** The sealed account number opened, or null when it cannot be (instructions.ts openNumber). */
function openNumber(sealed: string): string | null {
  try {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) return null;
    const decipher = createDecipheriv('aes-256-gcm', ENCRYPTION_KEY, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const DESTINATION_KEY = createHmac('sha256', ENCRYPTION_KEY).update('payout-instruction-signature/v1').digest();
const PAYOUT_KEY = createHmac('sha256', ENCRYPTION_KEY).update('disbursement-signature/v1').digest();

/** shared/payouts/signature.ts signDestination, version 2 (issue 42: the label and livemode signed, stored as `v2.<mac>`). */
function signDestination(d: { instructionId: string; workspaceId: string; counterpartyId: string; label: string; bankName: string; accountHolder: string; accountNumber: string; livemode: boolean }): string {
  const text = JSON.stringify({
    v: 2,
    account_holder: d.accountHolder,
    account_number: d.accountNumber,
    bank_name: d.bankName,
    counterparty_id: d.counterpartyId.toLowerCase(),
    instruction_id: d.instructionId.toLowerCase(),
    label: d.label,
    livemode: d.livemode,
    workspace_id: d.workspaceId.toLowerCase(),
  });
  return `v2.${createHmac('sha256', DESTINATION_KEY).update(text).digest('base64url')}`;
}

function signPayout(p: { disbursementId: string; workspaceId: string; dealId: string; milestoneId: string; instructionId: string; counterpartyId: string; amount: number; currency: string; isTest: boolean }): string {
  const text = JSON.stringify({
    v: 1,
    amount: p.amount,
    counterparty_id: p.counterpartyId.toLowerCase(),
    currency: p.currency.toUpperCase(),
    deal_id: p.dealId.toLowerCase(),
    disbursement_id: p.disbursementId.toLowerCase(),
    instruction_id: p.instructionId.toLowerCase(),
    is_test: p.isTest,
    milestone_id: p.milestoneId.toLowerCase(),
    workspace_id: p.workspaceId.toLowerCase(),
  });
  return createHmac('sha256', PAYOUT_KEY).update(text).digest('base64url');
}

// ---- Rows ----------------------------------------------------------------------------------

interface MemberJson {
  id: string;
  role: Role;
  status: string;
}
interface WorkspaceJson {
  id: string;
  is_sandbox: boolean;
  country_code: string;
}
interface KeyRow {
  key_id: string;
  workspace_id: string;
  scopes: string[];
  last_used_at: Date | null;
  member: MemberJson;
  workspace: WorkspaceJson;
  user_id: string;
  full_name: string;
  user_status: string;
}

interface DealRow {
  id: string;
  workspace_id: string;
  reference: string;
  title: string;
  description: string | null;
  external_ref: string | null;
  currency: string;
  counterparty_id: string;
  owner_id: string;
  owner_name: string;
  counterparty_name: string;
  counterparty_country_code: string;
  counterparty_kyb_status: string;
  counterparty_relationship: string;
  is_test: boolean;
  terms_review: boolean;
  cancelled_at: string | null;
  fee_rate_bp: number;
  fee_min: number;
  fee_tier_min_volume: number | null;
  fee_volume_basis: number;
  fee_allocation: string;
  fee_buyer_percent: number;
  platform_fee: number;
  buyer_fee: number;
  seller_fee: number;
  fee_frozen: boolean;
  created_at: string;
  updated_at: string;
}

type MilestoneStatus = 'draft' | 'awaiting_funding' | 'funded' | 'evidence_submitted' | 'revision_requested' | 'approved' | 'released' | 'disputed' | 'cancelled';

interface MilestoneRow {
  id: string;
  deal_id: string;
  sequence_no: number;
  title: string;
  required_evidence: string | null;
  amount: number;
  status: MilestoneStatus;
  due_at: string | null;
  funded_at: string | null;
  funding_method: string | null;
  evidence_summary: string | null;
  evidence_document_ids: unknown;
  evidence_submitted_at: string | null;
  approved_at: string | null;
  released_at: string | null;
  disputed_at: string | null;
  dispute_reason: string | null;
  approvals_required: number;
  approval_round: number;
  buyer_fee: number;
  seller_fee: number;
  funding_amount: number;
  payout_amount: number;
  refunded_amount: number;
  returned_amount: number;
}

interface InstructionRow {
  id: string;
  workspace_id: string;
  counterparty_id: string;
  label: string;
  bank_name: string;
  account_holder: string;
  account_number_sealed: string;
  account_number_last4: string;
  status: string;
  verification_signature: string | null;
  deleted_at: string | null;
}

interface EventRow {
  seq: number;
  id: string;
  event: string;
  entity_type: string;
  entity_id: string | null;
  deal_id: string | null;
  deal_reference: string | null;
  actor_id: string | null;
  actor_name: string | null;
  actor_label: string | null;
  amount: number | null;
  summary: string;
  created_at: string;
  livemode: boolean;
}

interface SlotRow {
  id: string;
  milestone_id: string;
  round: number;
  slot: number;
  status: string;
  approver_id: string | null;
  approver_name: string | null;
  note: string | null;
  decided_at: string | null;
}

interface PayoutBrief {
  id: string;
  milestone_id: string;
  amount: number;
  status: string;
  instruction_label: string;
  settled_at: string | null;
}

// ---- Statements ------------------------------------------------------------------------------

/** shared/enterprise/keys-repo.ts KEY_SQL, as is. */
const KEY = {
  name: 'floor_ent_key',
  text: `SELECT k.id AS key_id, k.workspace_id, k.scopes, k.last_used_at,
                to_jsonb(m) AS member, to_jsonb(w) AS workspace,
                u.id AS user_id, u.email, u.full_name, u.status AS user_status, u.role AS user_role
           FROM workspace_api_keys k
           JOIN workspace_members m ON m.id = k.created_by_member
           JOIN workspaces w ON w.id = k.workspace_id
           JOIN users u ON u.id = m.user_id
          WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
};

/** The columns of repo.dealById (deal with its owner's and counterparty's names). */
const DEAL_COLUMNS = `d.*, u.full_name AS owner_name, c.name AS counterparty_name, c.country_code AS counterparty_country_code,
                      c.kyb_status AS counterparty_kyb_status, c.relationship AS counterparty_relationship`;

/**
 * The key's advisory lock and stored row (idempotency_open), then, only once the key is
 * held, lockDeal's locks in its order: the workspace row FOR UPDATE, the deal FOR UPDATE
 * (of the deal only) with its names. A lateral join runs after the function's row.
 */
const OPEN_AND_LOCK = {
  name: 'floor_ent_open_lock',
  text: `SELECT o.locked, o.request_hash, o.state, o.response_status, o.response_body, o.expires_at, l.deal
           FROM idempotency_open($1, $2, $3) o
           LEFT JOIN LATERAL (
             SELECT (SELECT to_jsonb(x) FROM (SELECT ${DEAL_COLUMNS}
                                                FROM deals d JOIN users u ON u.id = d.owner_id JOIN counterparties c ON c.id = d.counterparty_id
                                               WHERE d.id = $5 AND d.workspace_id = $4 FOR UPDATE OF d) x) AS deal
               FROM (SELECT id FROM workspaces WHERE id = $4 AND o.locked FOR UPDATE) w
           ) l ON true`,
};
/** The same locks without a key (a request without Idempotency-Key runs in its own transaction). */
const LOCK = {
  name: 'floor_ent_lock',
  text: `SELECT true AS locked, NULL::text AS request_hash, NULL::text AS state, NULL::int AS response_status, NULL::text AS response_body,
                NULL::timestamptz AS expires_at, l.deal
           FROM (SELECT (SELECT to_jsonb(x) FROM (SELECT ${DEAL_COLUMNS}
                                                  FROM deals d JOIN users u ON u.id = d.owner_id JOIN counterparties c ON c.id = d.counterparty_id
                                                 WHERE d.id = $2 AND d.workspace_id = $1 FOR UPDATE OF d) x) AS deal
                   FROM (SELECT id FROM workspaces WHERE id = $1 FOR UPDATE) w) l`,
};
const FORGET_KEY = { name: 'floor_ent_forget_key', text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND endpoint = $2 AND key = $3' };

interface Opened {
  locked: boolean;
  request_hash: string | null;
  state: string | null;
  response_status: number | null;
  response_body: string | null;
  expires_at: Date | null;
  deal: DealRow | null;
}

/** The deal's milestones (repo.milestonesOf), read after the locks. */
const MILESTONES = {
  name: 'floor_ent_milestones',
  text: 'SELECT * FROM deal_milestones WHERE deal_id = $1 ORDER BY sequence_no',
};

/** A job row's queue (shared/queues.ts JOBS). */
const QUEUE_OF = { 'payouts.disburse': 'payouts', 'mail.send': 'mail', 'webhooks.dispatch': 'webhooks' } as const;

/**
 * Fund's writes: the compare-and-set (moves.ts transition 'fund'), the seq and the
 * `milestone.funded` event (appendEvent), the webhook nudge (nudgeWebhooks) and, with a
 * key, the completed key row (recordAnswer). Nothing but the compare-and-set is written
 * when it fails (the caller rolls back).
 */
const FUND_WRITE = {
  name: 'floor_ent_fund_write',
  text: `WITH m AS (UPDATE deal_milestones SET funded_at = $3, funding_method = 'sandbox', funding_reference = $4, updated_at = $3, status = 'funded'
                    WHERE id = $2 AND status IN ('awaiting_funding') RETURNING id, sequence_no, funding_amount),
          s AS (UPDATE workspaces SET last_event_seq = last_event_seq + 1 WHERE id = $1 AND EXISTS (SELECT 1 FROM m) RETURNING last_event_seq, is_sandbox),
          ev AS (INSERT INTO workspace_events (workspace_id, seq, event, entity_type, entity_id, deal_id, deal_reference, actor_id, actor_name, actor_label, amount, summary, livemode, created_at)
                 SELECT $1::uuid, s.last_event_seq, 'milestone.funded', 'milestone', m.id, $5::uuid, $6::text, $7::uuid, $8::text, NULL, m.funding_amount,
                        'Milestone ' || m.sequence_no || ' of deal ' || $6::text || ' funded (sandbox)', NOT s.is_sandbox AND NOT $9::boolean, $3::timestamptz
                   FROM m, s),
          nudge AS (INSERT INTO outbox (queue, job, payload, available_at, created_at)
                    SELECT 'webhooks', 'webhooks.dispatch', jsonb_build_object('workspace_id', $1::uuid), $3::timestamptz, $3::timestamptz FROM s
                     WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = $1 AND status = 'active')),
          ik AS (INSERT INTO idempotency_keys (scope, endpoint, key, request_hash, state, response_status, response_body, locked_at, created_at, expires_at)
                 SELECT $10::text, $11::text, $12::uuid, $13::text, 'completed', 200, $14::text, $3::timestamptz, $3::timestamptz, $15::timestamptz FROM m WHERE $10::text IS NOT NULL)
     SELECT count(*)::int AS moved FROM m`,
};

/**
 * Release's reads after the locks: the milestones; the named live instructions of the
 * workspace FOR SHARE in id order (instructionsForRelease); the milestone's last release
 * number (repo.nextReleaseNo); the release mail's recipients (mailOptedInMembers, topic
 * money, not the releaser); whether an endpoint is active (nudgeWebhooks).
 */
const RELEASE_READ = {
  name: 'floor_ent_release_read',
  text: `SELECT (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY m.sequence_no), '[]'::jsonb) FROM deal_milestones m WHERE m.deal_id = $1) AS milestones,
                (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.id), '[]'::jsonb)
                   FROM (SELECT * FROM payout_instructions WHERE workspace_id = $2 AND id = ANY($3::uuid[]) AND deleted_at IS NULL ORDER BY id FOR SHARE) p) AS instructions,
                (SELECT max(release_no) FROM disbursements WHERE milestone_id = $4) AS last_release,
                (SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', r.id, 'email', r.email) ORDER BY r.id), '[]'::jsonb)
                   FROM (SELECT u.id, u.email FROM workspace_members m JOIN users u ON u.id = m.user_id
                          WHERE m.workspace_id = $2 AND m.status = 'active' AND m.notify_email = true AND u.status = 'active'
                            AND m.notify_money = true AND NOT u.id = $5) r) AS recipients,
                EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = $2 AND status = 'active') AS endpoint`,
};

/**
 * Release's writes, all or nothing on the compare-and-set (transition 'release'): the
 * disbursements, the outbox rows in the API's order, the mails, the seq moved by 3 and
 * the three events at seq - 2, - 1, 0.
 */
const RELEASE_WRITE = {
  name: 'floor_ent_release_write',
  text: `WITH m AS (UPDATE deal_milestones SET released_at = $3, updated_at = $3, status = 'released'
                    WHERE id = $2 AND status IN ('approved') RETURNING id),
          d AS (INSERT INTO disbursements (id, signature, workspace_id, deal_id, milestone_id, payout_instruction_id, instruction_label, destination_bank_name, destination_account_holder, destination_account_last4, amount, currency, is_test, release_no, split_no, created_at, updated_at)
                SELECT x.id, x.signature, $1::uuid, $4::uuid, $2::uuid, x.payout_instruction_id, x.instruction_label, x.destination_bank_name, x.destination_account_holder, x.destination_account_last4, x.amount, $5::text, $6::boolean, $7::int, x.split_no, $3::timestamptz, $3::timestamptz
                  FROM m, jsonb_to_recordset($8::jsonb) AS x(id uuid, signature text, payout_instruction_id uuid, instruction_label text, destination_bank_name text, destination_account_holder text, destination_account_last4 text, amount bigint, split_no int)),
          ob AS (INSERT INTO outbox (queue, job, payload, available_at, created_at)
                 SELECT x.queue, x.job, x.payload, $3::timestamptz, $3::timestamptz
                   FROM m, jsonb_to_recordset($9::jsonb) AS x(queue text, job text, payload jsonb, n int)
                  ORDER BY x.n),
          mail AS (INSERT INTO outbound_emails (id, user_id, to_address, template, subject, body_sealed, created_at)
                   SELECT x.id, x.user_id, x.to_address, 'enterprise.milestone-released', $10::text, x.body_sealed, $3::timestamptz
                     FROM m, jsonb_to_recordset($11::jsonb) AS x(id uuid, user_id uuid, to_address text, body_sealed text)),
          s AS (UPDATE workspaces SET last_event_seq = last_event_seq + $12::int WHERE id = $1 AND EXISTS (SELECT 1 FROM m) RETURNING last_event_seq, is_sandbox),
          ev AS (INSERT INTO workspace_events (workspace_id, seq, event, entity_type, entity_id, deal_id, deal_reference, actor_id, actor_name, actor_label, amount, summary, livemode, created_at)
                 SELECT $1::uuid, s.last_event_seq - $12::int + x.n, x.event, x.entity_type, x.entity_id, $4::uuid, $13::text, $14::uuid, $15::text, NULL, x.amount, x.summary,
                        NOT s.is_sandbox AND NOT $6::boolean, $3::timestamptz
                   FROM s, jsonb_to_recordset($16::jsonb) AS x(n int, event text, entity_type text, entity_id uuid, amount bigint, summary text))
     SELECT count(*)::int AS moved FROM m`,
};

/** The deal's answer read after the write (read.ts detail: deal, milestones, last 100 events, extras, approve decisions). */
const DETAIL = {
  name: 'floor_ent_detail',
  text: `WITH ms AS (SELECT * FROM deal_milestones WHERE deal_id = $1)
     SELECT (SELECT to_jsonb(x) FROM (SELECT ${DEAL_COLUMNS} FROM deals d JOIN users u ON u.id = d.owner_id JOIN counterparties c ON c.id = d.counterparty_id
                                       WHERE d.id = $1 AND d.workspace_id = $2) x) AS deal,
            (SELECT coalesce(jsonb_agg(to_jsonb(ms) ORDER BY ms.sequence_no), '[]'::jsonb) FROM ms) AS milestones,
            (SELECT coalesce(jsonb_agg(to_jsonb(e) ORDER BY e.seq DESC), '[]'::jsonb)
               FROM (SELECT * FROM workspace_events WHERE workspace_id = $2 AND seq > 0 AND deal_id = $1 ORDER BY seq DESC LIMIT 100) e) AS events,
            (SELECT coalesce(jsonb_agg(to_jsonb(a) ORDER BY a.milestone_id, a.round, a.slot), '[]'::jsonb)
               FROM (SELECT a.id, a.milestone_id, a.round, a.slot, a.status, a.approver_id, u.full_name AS approver_name, a.note, a.decided_at
                       FROM milestone_approvals a LEFT JOIN users u ON u.id = a.approver_id WHERE a.milestone_id IN (SELECT id FROM ms)) a) AS approvals,
            (SELECT count(*)::int FROM deal_documents doc
              WHERE doc.milestone_id IN (SELECT id FROM ms)
                 OR doc.id::text IN (SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(ms.evidence_document_ids) = 'array' THEN ms.evidence_document_ids ELSE '[]'::jsonb END) FROM ms)) AS documents,
            (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.release_no, p.split_no), '[]'::jsonb)
               FROM (SELECT id, milestone_id, amount, status, instruction_label, settled_at, release_no, split_no FROM disbursements WHERE milestone_id IN (SELECT id FROM ms)) p) AS disbursements,
            (SELECT count(*)::int FROM milestone_decisions WHERE deal_id = $1 AND decision = 'approve') AS approvals_by_people`,
};

const RECORD_KEY = {
  name: 'floor_ent_record_key',
  text: `INSERT INTO idempotency_keys (scope, endpoint, key, request_hash, state, response_status, response_body, locked_at, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, $7, $8)`,
};

// ---- Limits (api/middleware/rate-limit.ts; one script for the API's two round trips) --------

// KEYS: the address's failure counter, the user's shared counter, the route's counter.
// ARGV: failure limit, user limit, window ms, access granted (1/0), route limit.
// Answers {0, ms} address blocked, {1, ms} user over, {3, ms} route over, {2, 0} allowed.
const LIMITS_SCRIPT = `
local fails = tonumber(redis.call('GET', KEYS[1]) or '0')
if fails >= tonumber(ARGV[1]) then return {0, redis.call('PTTL', KEYS[1])} end
local n = redis.call('INCR', KEYS[2])
local ttl = redis.call('PTTL', KEYS[2])
if ttl < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[3]); ttl = tonumber(ARGV[3]) end
if n > tonumber(ARGV[2]) then return {1, ttl} end
if ARGV[4] ~= '1' then return {2, 0} end
local r = redis.call('INCR', KEYS[3])
local rttl = redis.call('PTTL', KEYS[3])
if rttl < 0 then redis.call('PEXPIRE', KEYS[3], ARGV[3]); rttl = tonumber(ARGV[3]) end
if r > tonumber(ARGV[5]) then return {3, rttl} end
return {2, 0}`;

// KEYS: the address's failure counter, the key prefix's. ARGV: window ms, address limit, prefix limit.
const FAILURE_SCRIPT = `
local a = redis.call('INCR', KEYS[1])
if a == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local b = 0
if KEYS[2] ~= KEYS[1] then
  b = redis.call('INCR', KEYS[2])
  if b == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
end
if a > tonumber(ARGV[2]) then return {1, redis.call('PTTL', KEYS[1])} end
if b > tonumber(ARGV[3]) then return {1, redis.call('PTTL', KEYS[2])} end
return {0, 0}`;

interface LimitScripts {
  floorEntLimits(failKey: string, userKey: string, routeKey: string, failLimit: number, userLimit: number, windowMs: number, granted: number, routeLimit: number): Promise<[number, number]>;
  floorEntFailure(failKey: string, prefixKey: string, windowMs: number, failLimit: number, prefixLimit: number): Promise<[number, number]>;
}

const retrySeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

// ---- Serialisers (shared/deals/serialize.ts, extras.ts, shared/enterprise/serialize.ts) -----

const HELD: readonly MilestoneStatus[] = ['funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed'];

function dealStatus(deal: { cancelled_at: string | null; terms_review: boolean }, milestones: readonly { status: MilestoneStatus }[]): string {
  const live = milestones.filter((m) => m.status !== 'cancelled');
  if (deal.cancelled_at !== null || live.length === 0) return 'cancelled';
  if (live.some((m) => m.status === 'disputed')) return 'disputed';
  if (live.every((m) => m.status === 'released')) return 'completed';
  if (live.some((m) => m.status === 'released')) return 'in_progress';
  if (live.some((m) => HELD.includes(m.status))) return 'funded';
  if (live.some((m) => m.status === 'awaiting_funding')) return 'awaiting_funding';
  return deal.terms_review ? 'terms_review' : 'draft';
}

function serializeDeal(d: DealRow, milestones: MilestoneRow[], status: string, workspaceCountry: string) {
  const live = milestones.filter((m) => m.status !== 'cancelled');
  const sum = (ms: MilestoneRow[]) => ms.reduce((s, m) => s + m.amount, 0);
  return {
    id: d.id,
    reference: d.reference,
    title: d.title,
    description: d.description,
    external_ref: d.external_ref,
    status,
    currency: d.currency,
    total_amount: sum(live),
    funded_amount: sum(live.filter((m) => HELD.includes(m.status) || m.status === 'released')),
    released_amount: live.filter((m) => m.status === 'released').reduce((s, m) => s + m.amount - m.refunded_amount, 0),
    cross_border: d.counterparty_country_code !== workspaceCountry,
    owner: { id: d.owner_id, name: d.owner_name },
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    counterparty: { id: d.counterparty_id, name: d.counterparty_name, country_code: d.counterparty_country_code, kyb_status: d.counterparty_kyb_status, relationship: d.counterparty_relationship },
    fee: {
      rate_bp: d.fee_rate_bp,
      rate_percent: d.fee_rate_bp / 100,
      min_fee: d.fee_min,
      tier: d.fee_tier_min_volume === null ? null : { min_volume: d.fee_tier_min_volume },
      volume_basis: d.fee_volume_basis,
      platform_fee: d.platform_fee,
      allocation: d.fee_allocation,
      buyer_percent: d.fee_buyer_percent,
      seller_percent: 100 - d.fee_buyer_percent,
      buyer_fee: d.buyer_fee,
      seller_fee: d.seller_fee,
      funding_total: live.reduce((s, m) => s + m.funding_amount, 0),
      payout_total: live.reduce((s, m) => s + m.payout_amount, 0),
      payer: 'workspace',
      payee: 'counterparty',
      frozen: d.fee_frozen,
    },
    is_test: d.is_test,
  };
}

function serializeMilestone(m: MilestoneRow, slots: SlotRow[], payouts: PayoutBrief[]) {
  return {
    id: m.id,
    sequence_no: m.sequence_no,
    title: m.title,
    required_evidence: m.required_evidence,
    amount: m.amount,
    status: m.status,
    due_at: iso(m.due_at),
    funded_at: iso(m.funded_at),
    funding_method: m.funding_method,
    evidence_summary: m.evidence_summary,
    evidence_submitted_at: iso(m.evidence_submitted_at),
    approved_at: iso(m.approved_at),
    released_at: iso(m.released_at),
    disputed_at: iso(m.disputed_at),
    dispute_reason: m.dispute_reason,
    approvals_required: m.approvals_required,
    approvals: slots.map((s) => ({ id: s.id, approver: s.approver_id ? { id: s.approver_id, name: s.approver_name } : null, status: s.status, note: s.note, decided_at: iso(s.decided_at) })),
    documents: [] as never[],
    disbursements: payouts.map((p) => ({ id: p.id, amount: p.amount, status: p.status, instruction_label: p.instruction_label, settled_at: iso(p.settled_at) })),
    buyer_fee: m.buyer_fee,
    seller_fee: m.seller_fee,
    funding_amount: m.funding_amount,
    payout_amount: m.payout_amount,
  };
}

function serializeEvent(e: EventRow) {
  return {
    seq: Number(e.seq),
    id: e.id,
    event: e.event,
    entity_type: e.entity_type,
    entity_id: e.entity_id,
    deal_id: e.deal_id,
    deal_reference: e.deal_reference,
    actor: e.actor_id ? { id: e.actor_id, name: e.actor_name } : null,
    actor_label: e.actor_label,
    amount: e.amount === null ? null : Number(e.amount),
    summary: e.summary,
    created_at: iso(e.created_at),
    livemode: e.livemode,
  };
}

interface DetailRow {
  deal: DealRow;
  milestones: MilestoneRow[];
  events: EventRow[];
  approvals: SlotRow[];
  documents: number;
  disbursements: PayoutBrief[];
  approvals_by_people: number;
}

/** serializeDetail: { deal, milestones, events, outcome }. */
function serializeDetail(r: DetailRow, workspaceCountry: string) {
  if (r.documents > 0) throw new Error('floor: deals with documents are not serialised here (the bench has none)');
  const ms = r.milestones;
  const rounds = new Map(ms.map((m) => [m.id, m.approval_round]));
  const released = ms.filter((m) => m.released_at !== null && m.funded_at !== null);
  const minutes = released.map((m) => (new Date(m.released_at!).getTime() - new Date(m.funded_at!).getTime()) / 60_000);
  return {
    deal: serializeDeal(r.deal, ms, dealStatus(r.deal, ms), workspaceCountry),
    milestones: ms.map((m) =>
      serializeMilestone(
        m,
        r.approvals.filter((s) => s.milestone_id === m.id && s.round === rounds.get(m.id)),
        r.disbursements.filter((p) => p.milestone_id === m.id),
      ),
    ),
    events: r.events.map(serializeEvent),
    outcome: {
      time_to_release_minutes: minutes.length ? Math.round(minutes.reduce((a, b) => a + b, 0) / minutes.length) : null,
      approvals_by_people: r.approvals_by_people,
      revisions: r.events.filter((e) => e.event === 'milestone.revision_requested' || e.event === 'milestone.rejected').length,
    },
  };
}

// ---- The module ------------------------------------------------------------------------------

interface Caller {
  keyId: string;
  userId: string;
  userName: string;
  workspace: WorkspaceJson;
}

const FUND_METHODS = new Set(['qris', 'va', 'ewallet', 'wire', 'sandbox']);

/** shared/deals/mail.ts rupiah, and shared/enterprise/mail.ts oneLine. */
const rupiah = (amount: number, currency: string) => `${currency} ${amount.toLocaleString('id-ID')}`;
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

const PgPool = pg.Pool;

const TOUCH_KEY = { name: 'floor_ent_touch_key', text: 'UPDATE workspace_api_keys SET last_used_at = $1 WHERE id = $2' };

type Statement = { name?: string; text: string; values?: unknown[] };

/**
 * Statements sent in one flight on a pipelined connection (node-postgres `pipeline: true`):
 * each `client.query` issued before any answer, the server running them in order. Answers
 * each one's rows; the first failure rejects (the rest then fail too: the transaction is
 * aborted, and the caller rolls it back).
 */
async function flight(client: pg.PoolClient, statements: readonly Statement[]): Promise<pg.QueryResultRow[][]> {
  const sent = statements.map((st) => client.query<pg.QueryResultRow>(st));
  return (await Promise.all(sent)).map((r): pg.QueryResultRow[] => r.rows);
}

export const fundFloor: FloorModule = (stores: FloorStores): FloorRoute[] => {
  // A pool of its own with node-postgres's documented pipelining (`pipeline: true`, pg 8.23,
  // as the API's): statements sent one after another without awaiting travel in one flight,
  // every value bound (issue 43). The other floors keep the server's pool.
  const pool = new PgPool({
    connectionString: stores.pool.options.connectionString,
    max: stores.pool.options.max,
    application_name: 'bench-floor-fund',
    pipeline: true,
  } satisfies pg.PoolConfig & { pipeline: boolean });
  const redis: Redis = stores.redis;
  redis.defineCommand('floorEntLimits', { numberOfKeys: 3, lua: LIMITS_SCRIPT });
  redis.defineCommand('floorEntFailure', { numberOfKeys: 2, lua: FAILURE_SCRIPT });
  const scripts = redis as unknown as LimitScripts;

  /** enterpriseAuth({ role: 'finance' }) and rateLimit(rule) for a workspace key; undefined when refused (answered). */
  async function authenticate(ctx: Koa.Context, limitName: string): Promise<Caller | undefined> {
    ctx.set('Cache-Control', 'private, no-store');
    const token = BEARER.exec(ctx.get('Authorization'))?.[1];
    if (!token || !token.startsWith('rpe_')) return fail(ctx, 401, 'UNAUTHORIZED', 'Sign in or send an API key (the floor takes workspace keys only)');
    const row = (await pool.query<KeyRow>({ ...KEY, values: [sha256Hex(token)] })).rows[0];
    const failKey = `${PREFIX}:authfail:ip:${ctx.ip}`;
    if (!row || row.member.status !== 'active') {
      const prefixKey = token.length >= 8 ? `${PREFIX}:authfail:key:${token.slice(0, 8)}` : failKey;
      const [over, ms] = await scripts.floorEntFailure(failKey, prefixKey, FAILURE_WINDOW_MS, FAILURE_LIMIT, KEY_PREFIX_FAILURE_LIMIT);
      if (over === 1) {
        ctx.set('Retry-After', String(retrySeconds(ms)));
        return fail(ctx, 429, 'RATE_LIMITED', 'Too many failed attempts; try again later');
      }
      return fail(ctx, 401, 'INVALID_TOKEN', 'The API key is wrong, revoked or no longer active');
    }
    const now = Date.now();
    if (!row.last_used_at || now - row.last_used_at.getTime() >= TOUCH_INTERVAL_MS) {
      // bookkeepingWrite: the key's use, without waiting for the disk.
      const client = await pool.connect();
      try {
        await flight(client, [{ text: 'BEGIN' }, { text: 'SET LOCAL synchronous_commit TO off' }, { ...TOUCH_KEY, values: [new Date(now), row.key_id] }, { text: 'COMMIT' }]);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    }
    if (row.user_status === 'suspended') return fail(ctx, 403, 'SUSPENDED', 'The account that created this key is suspended');
    if (row.user_status !== 'active') return fail(ctx, 403, 'ACCOUNT_INACTIVE', 'The account that created this key is not active');
    // resolveAccess: scope, the workspace header, the role (a read+write key acts as its creator).
    let refusal: [number, string, string] | undefined;
    const header = ctx.get('X-Enterprise-Account');
    if (!row.scopes.includes('write')) refusal = [403, 'SCOPE_REQUIRED', 'This key can only read'];
    else if (header !== '' && !UUID.test(header)) refusal = [400, 'INVALID_ACCOUNT', 'X-Enterprise-Account must be a workspace id'];
    else if (header !== '' && header.toLowerCase() !== row.workspace_id) refusal = [403, 'NO_WORKSPACE', 'You are not a member of this workspace'];
    else if (rankOf(row.member.role) < rankOf('finance')) refusal = [403, 'FORBIDDEN', 'This needs the finance role or higher'];
    const [verdict, ms] = await scripts.floorEntLimits(
      failKey,
      `${PREFIX}:rl:authenticated:u:${row.user_id}`,
      `${PREFIX}:rl:${limitName}:u:${row.user_id}`,
      FAILURE_LIMIT,
      AUTH_LIMIT,
      60_000,
      refusal ? 0 : 1,
      MONEY_LIMIT,
    );
    if (verdict !== 2) {
      ctx.set('Retry-After', String(retrySeconds(ms)));
      return fail(ctx, 429, 'RATE_LIMITED', verdict === 0 ? 'Too many failed attempts; try again later' : 'Too many requests');
    }
    if (refusal) return fail(ctx, ...refusal);
    return { keyId: row.key_id, userId: row.user_id, userName: row.full_name, workspace: row.workspace };
  }

  /** clearOwnOverview: the caller's cached overview of the workspace, every role. */
  async function clearOverview(caller: Caller): Promise<void> {
    await redis.del(...ROLES.map((r) => `${QUEUE_PREFIX}:ent-overview:${caller.workspace.id}:${caller.userId}:${r}`)).catch(() => 0);
  }

  interface Keyed {
    scope: string;
    endpoint: string;
    key: string;
    hash: string;
  }

  /**
   * One keyed (or unkeyed) transaction, in round trips as the API's (decision 0025): the first
   * flight sends BEGIN, the key's lock and stored row with the workspace row and the deal
   * locked FOR UPDATE (one statement), and the route's reads `ahead` (run after the locks:
   * the server runs a flight's statements in order); then `work`, which answers and sends its
   * last statements with COMMIT in one flight (`commit`), or refuses (undefined: rolled back).
   * A stored answer is replayed (or refused on another body), as enterpriseIdempotent.
   */
  async function inKeyedTransaction(
    ctx: Koa.Context,
    caller: Caller,
    body: unknown,
    dealId: string,
    ahead: (dealParam: string | null) => Statement,
    work: (
      deal: DealRow,
      key: Keyed | undefined,
      read: pg.QueryResultRow[],
      run: (statements: readonly Statement[]) => Promise<pg.QueryResultRow[][]>,
      commit: (statements: readonly Statement[]) => Promise<pg.QueryResultRow[][]>,
    ) => Promise<{ status: number; text: string } | undefined>,
  ): Promise<void> {
    const rawKey = ctx.get('Idempotency-Key');
    if (rawKey && !UUID_V4.test(rawKey)) return fail(ctx, 400, 'IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be a UUID v4');
    const key: Keyed | undefined = rawKey
      ? { scope: `ent:${caller.workspace.id}:k:${caller.keyId}`, endpoint: `POST ${ctx.path}`, key: rawKey.toLowerCase(), hash: sha256Hex(canonicalJson(body ?? null)) }
      : undefined;
    const client = await pool.connect();
    let open = false;
    try {
      open = true;
      const dealParam = UUID.test(dealId) ? dealId : null;
      const lockStatement = (): Statement =>
        key ? { ...OPEN_AND_LOCK, values: [key.scope, key.endpoint, key.key, caller.workspace.id, dealParam] } : { ...LOCK, values: [caller.workspace.id, dealParam] };
      const [, opened, read] = await flight(client, [{ text: 'BEGIN' }, lockStatement(), ahead(dealParam)]);
      let o = opened![0] as Opened;
      let readRows = read!;
      while (key && o.locked && o.state !== null && !(o.expires_at!.getTime() > Date.now() && o.state === 'completed')) {
        // openKey: an expired answer (or an in-flight row of the earlier design) is forgotten; the request runs.
        const [, again, reread] = await flight(client, [{ ...FORGET_KEY, values: [key.scope, key.endpoint, key.key] }, lockStatement(), ahead(dealParam)]);
        o = again![0] as Opened;
        readRows = reread!;
      }
      if (!o.locked) return await refuse(409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 'A request with this Idempotency-Key is still running; retry the same key shortly');
      if (key && o.state !== null) {
        if (o.request_hash !== key.hash) return await refuse(422, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was used with a different request body');
        await client.query('COMMIT');
        open = false;
        replayStored(ctx, o.response_status, o.response_body);
        // clearOwnOverview runs after any 2xx write, a replay included.
        if (ctx.status >= 200 && ctx.status < 300) await clearOverview(caller);
        return;
      }
      if (!o.deal) return await refuse(404, 'NOT_FOUND', 'No deal with this id in the workspace');
      const run = (statements: readonly Statement[]) => flight(client, statements);
      const commit = async (statements: readonly Statement[]) => {
        const rows = await flight(client, [...statements, { text: 'COMMIT' }]);
        open = false;
        return rows.slice(0, statements.length);
      };
      const answer = await work(o.deal, key, readRows, run, commit);
      if (!answer) {
        if (open) await client.query('ROLLBACK');
        open = false;
        return;
      }
      if (open) {
        await client.query('COMMIT');
        open = false;
      }
      ctx.status = answer.status;
      ctx.type = 'application/json';
      ctx.body = answer.text;
      await clearOverview(caller);
    } finally {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }

    async function refuse(status: number, code: string, message: string): Promise<void> {
      if (open) await client.query('ROLLBACK');
      open = false;
      fail(ctx, status, code, message);
    }
  }

  async function fund(ctx: Koa.Context, params: readonly string[]): Promise<void> {
    const [dealId = '', milestoneId = ''] = params;
    const caller = await authenticate(ctx, 'ent-fund');
    if (!caller) return;
    const body = parseJson(await rawBody(ctx), true);
    const b = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    const reference = typeof b?.reference === 'string' ? b.reference.trim() : undefined;
    const valid =
      b !== undefined &&
      Object.keys(b).every((k) => k === 'method' || k === 'reference') &&
      typeof b.method === 'string' &&
      FUND_METHODS.has(b.method) &&
      (b.reference === undefined || (reference !== undefined && reference.length >= 1 && reference.length <= 120));
    if (!valid) return fail(ctx, 400, 'INVALID_BODY', 'Request body is invalid');
    const readMilestones = (dealParam: string | null): Statement => ({ ...MILESTONES, values: [dealParam] });
    await inKeyedTransaction(ctx, caller, body, dealId, readMilestones, async (deal, key, read, _run, commit) => {
      if (!caller.workspace.is_sandbox) return void fail(ctx, 403, 'LIVE_FUNDING_IS_PLATFORM_CONFIRMED', 'Funding in a live workspace is confirmed by the platform');
      const milestones = read as MilestoneRow[];
      const m = milestones.find((x) => x.id === milestoneId);
      if (!m) return void fail(ctx, 404, 'NOT_FOUND', 'No milestone with this id in the deal');
      if (!deal.is_test) return void fail(ctx, 409, 'LIVE_DEAL_IN_SANDBOX', 'This deal is live');
      if (m.status !== 'awaiting_funding') return void fail(ctx, 409, 'CONCURRENT_MODIFICATION', 'The milestone changed meanwhile; read it again');
      const now = new Date();
      const moved = { ...m, status: 'funded' as const };
      const text = JSON.stringify({
        success: true,
        data: {
          milestone: { id: m.id, deal_id: m.deal_id, status: 'funded', amount: m.amount, buyer_fee: m.buyer_fee, funding_amount: m.funding_amount, funding_method: 'sandbox' },
          deal_status: dealStatus(deal, milestones.map((x) => (x.id === m.id ? moved : x))),
        },
      });
      const values = [
        deal.workspace_id,
        m.id,
        now,
        reference ?? null,
        deal.id,
        deal.reference,
        caller.userId,
        caller.userName,
        deal.is_test,
        key?.scope ?? null,
        key?.endpoint ?? null,
        key?.key ?? null,
        key?.hash ?? null,
        text,
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      ];
      // The milestone was read under the deal's lock, so its compare-and-set moves; the write
      // goes with COMMIT, and its CTE writes nothing unless the milestone moved.
      const [written] = await commit([{ ...FUND_WRITE, values }]);
      if ((written![0] as { moved: number }).moved !== 1) return void fail(ctx, 409, 'CONCURRENT_MODIFICATION', 'The milestone changed meanwhile; read it again');
      return { status: 200, text };
    });
  }

  async function release(ctx: Koa.Context, params: readonly string[]): Promise<void> {
    const [dealId = '', milestoneId = ''] = params;
    const caller = await authenticate(ctx, 'ent-release');
    if (!caller) return;
    const body = parseJson(await rawBody(ctx), true);
    const splits = releaseSplits(body);
    if (!splits) return fail(ctx, 400, 'INVALID_BODY', 'Request body is invalid');
    const ids = splits.map((s) => s.payout_instruction_id);
    const wanted = [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
    // Read with the locks (the deal in the workspace: a deal of another is refused 404 before these rows are used).
    const releaseRead = (dealParam: string | null): Statement => ({
      ...RELEASE_READ,
      values: [dealParam, caller.workspace.id, wanted, UUID.test(milestoneId) ? milestoneId : null, caller.userId],
    });
    await inKeyedTransaction(ctx, caller, body, dealId, releaseRead, async (deal, key, rows, run, commit) => {
      const read = rows[0] as { milestones: MilestoneRow[]; instructions: InstructionRow[]; last_release: number | null; recipients: { user_id: string; email: string }[]; endpoint: boolean };
      const m = read.milestones.find((x) => x.id === milestoneId);
      if (!m) return void fail(ctx, 404, 'NOT_FOUND', 'No milestone with this id in the deal');
      if (m.status === 'released' && m.returned_amount > 0) return void fail(ctx, 409, 'INVALID_STATE', 'floor: a second release of returned payouts is not reproduced');
      if (m.status !== 'approved') return void fail(ctx, 409, 'CONCURRENT_MODIFICATION', 'Only an approved milestone can be released');
      if (!deal.is_test) throw new Error('floor: releases of live deals (ledger postings) are not reproduced (the bench has sandbox deals only)');
      const due = m.payout_amount - m.refunded_amount;
      const invalid = (message: string) => void fail(ctx, 400, 'INVALID_BODY', `splits ${message}`);
      if (new Set(ids).size !== ids.length) return invalid('must name each payout instruction once');
      const sum = splits.reduce((a, s) => a + s.amount, 0);
      if (sum !== due) return invalid(`must add up to ${due} (the milestone's payout amount still to send), not ${sum}`);
      for (const id of ids) {
        const row = read.instructions.find((r) => r.id === id);
        if (!row) return invalid(`payout instruction ${id} is not an instruction of this workspace`);
        if (row.counterparty_id !== deal.counterparty_id) return invalid(`payout instruction ${id} belongs to another counterparty; splits go to the deal's counterparty`);
        if (row.status !== 'verified') return void fail(ctx, 409, 'INVALID_STATE', `Payout instruction "${row.label}" is not verified yet`);
        // checkDestination, on the row read FOR SHARE: verified, signed, the signature of its current fields, the last four.
        const number = row.verification_signature ? openNumber(row.account_number_sealed) : null;
        const signed =
          number !== null &&
          safeEqual(
            signDestination({ instructionId: row.id, workspaceId: row.workspace_id, counterpartyId: row.counterparty_id, label: row.label, bankName: row.bank_name, accountHolder: row.account_holder, accountNumber: number, livemode: !deal.is_test }),
            row.verification_signature!,
          ) &&
          number.slice(-4) === row.account_number_last4;
        if (!signed) return void fail(ctx, 409, 'INVALID_STATE', `Payout instruction "${row.label}" no longer matches its verification`);
      }

      const now = new Date();
      const releaseNo = (read.last_release ?? 0) + 1;
      const payouts = splits.map((s, i) => {
        const id = randomUUID();
        const row = read.instructions.find((r) => r.id === s.payout_instruction_id)!;
        const terms = { disbursementId: id, workspaceId: deal.workspace_id, dealId: deal.id, milestoneId: m.id, instructionId: row.id, counterpartyId: row.counterparty_id, amount: s.amount, currency: deal.currency, isTest: deal.is_test };
        return {
          id,
          signature: signPayout(terms),
          payout_instruction_id: row.id,
          instruction_label: row.label,
          destination_bank_name: row.bank_name,
          destination_account_holder: row.account_holder,
          destination_account_last4: row.account_number_last4,
          amount: s.amount,
          split_no: i + 1,
        };
      });
      const sandbox = deal.is_test ? ' [sandbox]' : '';
      const mailText = [
        `Milestone ${m.sequence_no} "${m.title}" of deal ${deal.reference} "${deal.title}" was released: ${rupiah(due, deal.currency)} in ${payouts.length} payout${payouts.length > 1 ? 's' : ''}:`,
        ...payouts.map((p) => `- ${rupiah(p.amount, deal.currency)} to "${p.instruction_label}" (${p.destination_bank_name} …${p.destination_account_last4}, ${p.destination_account_holder})`),
      ].join('\n');
      const mails = read.recipients.map((r) => ({ id: randomUUID(), user_id: r.user_id, to_address: r.email, body_sealed: encryptSecret(mailText) }));
      const jobs = [
        ...payouts.map((p) => ({ job: 'payouts.disburse' as const, payload: { disbursement_id: p.id } })),
        ...(read.endpoint ? [{ job: 'webhooks.dispatch' as const, payload: { workspace_id: deal.workspace_id } }] : []),
        ...mails.map((x) => ({ job: 'mail.send' as const, payload: { emailId: x.id } })),
      ].map((j, i) => ({ queue: QUEUE_OF[j.job], job: j.job, payload: j.payload, n: i + 1 }));
      const events = [
        { n: 1, event: 'milestone.released', entity_type: 'milestone', entity_id: m.id, amount: due, summary: `Milestone ${m.sequence_no} of deal ${deal.reference} released in ${payouts.length} payout${payouts.length > 1 ? 's' : ''}` },
        ...payouts.map((p, i) => ({ n: i + 2, event: 'disbursement.queued', entity_type: 'disbursement', entity_id: p.id, amount: p.amount, summary: `Payout of ${p.amount} to "${p.instruction_label}" queued` })),
      ];
      const values = [
        deal.workspace_id,
        m.id,
        now,
        deal.id,
        deal.currency,
        deal.is_test,
        releaseNo,
        JSON.stringify(payouts),
        JSON.stringify(jobs),
        oneLine(`Milestone released${sandbox}: ${deal.reference} milestone ${m.sequence_no}`),
        JSON.stringify(mails),
        events.length,
        deal.reference,
        caller.userId,
        caller.userName,
        JSON.stringify(events),
      ];
      // The write and the deal's detail read after it, in one flight; then the stored answer with COMMIT.
      const [written, detailRows] = await run([
        { ...RELEASE_WRITE, values },
        { ...DETAIL, values: [deal.id, deal.workspace_id] },
      ]);
      if ((written![0] as { moved: number }).moved !== 1) return void fail(ctx, 409, 'CONCURRENT_MODIFICATION', 'The milestone changed meanwhile; read it again');
      const detail = detailRows![0] as DetailRow;
      const text = JSON.stringify({ success: true, data: serializeDetail(detail, caller.workspace.country_code) });
      await commit(key ? [{ ...RECORD_KEY, values: [key.scope, key.endpoint, key.key, key.hash, 200, text, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)] }] : []);
      return { status: 200, text };
    });
  }

  return [
    { method: 'POST', path: /^\/v1\/enterprise\/deals\/([^/]+)\/milestones\/([^/]+)\/fund$/, auth: false, handle: (ctx, _caller, params) => fund(ctx, params) },
    { method: 'POST', path: /^\/v1\/enterprise\/deals\/([^/]+)\/milestones\/([^/]+)\/release$/, auth: false, handle: (ctx, _caller, params) => release(ctx, params) },
  ];
};

interface Split {
  payout_instruction_id: string;
  amount: number;
}

/** shared/payouts/schemas.ts `release`, by hand: 1 to 5 splits of { payout_instruction_id (guid), amount (integer >= 1) }. */
function releaseSplits(body: unknown): Split[] | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if (Object.keys(b).some((k) => k !== 'splits') || !Array.isArray(b.splits) || b.splits.length < 1 || b.splits.length > 5) return undefined;
  const out: Split[] = [];
  for (const s of b.splits as unknown[]) {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) return undefined;
    const x = s as Record<string, unknown>;
    if (Object.keys(x).some((k) => k !== 'payout_instruction_id' && k !== 'amount')) return undefined;
    if (typeof x.payout_instruction_id !== 'string' || !UUID.test(x.payout_instruction_id)) return undefined;
    if (typeof x.amount !== 'number' || !Number.isSafeInteger(x.amount) || x.amount < 1) return undefined;
    out.push({ payout_instruction_id: x.payout_instruction_id, amount: x.amount });
  }
  return out;
}

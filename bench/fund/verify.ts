/**
 * The fund-and-release bench's checks.
 *
 * Before any load (`checkFloor`): one deal's flow through the API and one through the floor
 * server, two deals of the same workspace, one after the other. Each answer must be 200;
 * both keys replayed must answer the stored body byte for byte with `Idempotent-Replay:
 * true` and add nothing; and the two sides must agree, once ids, timestamps, seqs and deal
 * references are replaced by their relations (every id by its role: the workspace, the deal,
 * the funded and the released milestone, each instruction, the owner, the approver…, others
 * by order of first appearance), on: both answers; the deal's milestones and the deal row;
 * the workspace events the flow appended (seq right after the workspace's last, in order);
 * the disbursements (each signature checked with the service's `payoutSignatureMatches`);
 * the outbox rows the flow added, in id order; the mails they name (bodies opened with the
 * service's key); the two idempotency rows (the same request hashes, the answer stored as
 * sent, kept 24 hours). No journal entry may be added (sandbox releases post nothing).
 *
 * After the load (`checkAfter`): every flow that completed funded its first milestone once
 * and released its second once, in two disbursements adding up to its payout_amount (release
 * number 1, splits 1 and 2, one `milestone.released` and two `disbursement.queued` events);
 * no bench milestone anywhere was released twice or into other amounts; and every ledger
 * invariant holds (`checkLedger`, as `npm run ledger:check`).
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { all, benchDb, one } from '../lib/db.js';
import { fmtInt } from '../lib/format.js';
import { countFlows, type CountedStep, type LeanCheck } from '../lib/statements.js';
import { FUND_BODY, fundPath, releasePath, type Target } from './load.js';
import { DEAL_TITLE, splitsOf, type FundItem, type FundSeed } from './seed.js';

interface Answer {
  status: number;
  text: string;
  replay: string | null;
}

async function post(base: string, path: string, key: string, idem: string, body: string): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': idem }, body });
  return { status: res.status, text: await res.text(), replay: res.headers.get('idempotent-replay') };
}

const UUID_G = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const UUID_1 = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const REF = /DL-\d{6}/g;

/** Replaces ids by their roles (or order of appearance), timestamps by `ts`, deal references by `REF`. */
class Normaliser {
  private readonly ids = new Map<string, string>();
  constructor(named: Record<string, string>) {
    for (const [role, id] of Object.entries(named)) this.ids.set(id.toLowerCase(), role);
  }
  private id(raw: string): string {
    const k = raw.toLowerCase();
    let name = this.ids.get(k);
    if (!name) this.ids.set(k, (name = `id${this.ids.size}`));
    return name;
  }
  value(v: unknown, key = ''): unknown {
    if (v instanceof Date) return 'ts';
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, this.value(x, k)]));
    }
    if (typeof v === 'string') {
      if (ISO.test(v)) return 'ts';
      if (UUID_1.test(v)) return this.id(v);
      return v.replace(UUID_G, (m) => this.id(m)).replace(REF, 'REF');
    }
    if (key === 'seq') return 'seq';
    return v;
  }
}

/** The first path where `a` and `b` differ, to print. */
function firstDifference(a: unknown, b: unknown, path = ''): string {
  if (isDeepStrictEqual(a, b)) return '';
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path || '(root)'}: API ${JSON.stringify(a)?.slice(0, 300)} / floor ${JSON.stringify(b)?.slice(0, 300)}`;
}

interface SideRows {
  answers: { fund: unknown; release: unknown };
  milestones: Record<string, unknown>[];
  deal: Record<string, unknown>;
  events: Record<string, unknown>[];
  disbursements: Record<string, unknown>[];
  outbox: Record<string, unknown>[];
  mails: Record<string, unknown>[];
  keys: Record<string, unknown>[];
}

const DAY_MS = 24 * 3600_000;

/** One deal's flow against `base`, with every check that needs no other side; answers what the two sides must agree on. */
async function flowAndRows(what: string, base: string, seed: FundSeed, item: FundItem): Promise<SideRows> {
  const { decryptSecret } = await import('../../shared/crypto.js');
  const { payoutSignatureMatches } = await import('../../shared/payouts/signature.js');
  const w = seed.workspaces[item.workspace]!;
  const fail = (msg: string): never => {
    throw new Error(`check failed (${what}): ${msg}`);
  };
  const before = await one<{ outbox: number; seq: number; journal: number }>(
    `SELECT (SELECT coalesce(max(id), 0)::bigint FROM outbox) AS outbox, (SELECT last_event_seq FROM workspaces WHERE id = ?) AS seq, (SELECT count(*)::int FROM journal_entries) AS journal`,
    [w.id],
  );
  const keys = { fund: randomUUID(), release: randomUUID() };
  const releaseBody = JSON.stringify({ splits: splitsOf(w, item) });
  const fund = await post(base, fundPath(item), w.key, keys.fund, FUND_BODY);
  if (fund.status !== 200) fail(`fund answered ${fund.status} ${fund.text.slice(0, 300)}`);
  const release = await post(base, releasePath(item), w.key, keys.release, releaseBody);
  if (release.status !== 200) fail(`release answered ${release.status} ${release.text.slice(0, 300)}`);
  const counts = async () => one<{ n: string }>(`SELECT (SELECT coalesce(max(id), 0) FROM outbox) || '/' || (SELECT last_event_seq FROM workspaces WHERE id = ?) || '/' || (SELECT count(*) FROM idempotency_keys) AS n`, [w.id]);
  const after = await counts();
  for (const [name, path, body, first] of [
    ['fund', fundPath(item), FUND_BODY, fund],
    ['release', releasePath(item), releaseBody, release],
  ] as const) {
    const again = await post(base, path, w.key, keys[name], body);
    if (again.status !== 200 || again.replay !== 'true' || again.text !== first.text) fail(`the ${name} key replayed ${again.status} (Idempotent-Replay ${again.replay}), not the stored answer`);
  }
  if ((await counts()).n !== after.n) fail('a replay wrote something');

  const journal = await one<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries');
  if (journal.n !== before.journal) fail(`${journal.n - before.journal} journal entries added (a sandbox release posts nothing)`);
  const milestones = await all<Record<string, unknown>>('SELECT * FROM deal_milestones WHERE deal_id = ? ORDER BY sequence_no', [item.dealId]);
  const deal = await one<Record<string, unknown>>('SELECT * FROM deals WHERE id = ?', [item.dealId]);
  const events = await all<Record<string, unknown> & { seq: number }>('SELECT * FROM workspace_events WHERE workspace_id = ? AND seq > ? ORDER BY seq', [w.id, before.seq]);
  events.forEach((e, i) => {
    if (Number(e.seq) !== Number(before.seq) + i + 1) fail(`event seq ${e.seq} where ${Number(before.seq) + i + 1} was due`);
  });
  const wantedEvents = ['milestone.funded', 'milestone.released', 'disbursement.queued', 'disbursement.queued'];
  if (!isDeepStrictEqual(events.map((e) => e.event), wantedEvents)) fail(`events ${events.map((e) => e.event).join(', ')}`);
  const disbursements = await all<Record<string, unknown>>('SELECT * FROM disbursements WHERE deal_id = ? ORDER BY release_no, split_no', [item.dealId]);
  for (const d of disbursements) {
    const terms = {
      disbursementId: String(d.id),
      workspaceId: String(d.workspace_id),
      dealId: String(d.deal_id),
      milestoneId: String(d.milestone_id),
      instructionId: String(d.payout_instruction_id),
      counterpartyId: w.counterpartyId,
      amount: Number(d.amount),
      currency: String(d.currency),
      isTest: d.is_test === true,
    };
    if (!payoutSignatureMatches(terms, typeof d.signature === 'string' ? d.signature : null)) fail(`disbursement ${String(d.id)}: its signature does not match (the payout worker would refuse it)`);
  }
  const sum = disbursements.reduce((s, d) => s + Number(d.amount), 0);
  if (disbursements.length !== 2 || sum !== item.payout) fail(`${disbursements.length} disbursements adding up to ${sum}, not 2 adding up to ${item.payout}`);
  const outbox = await all<Record<string, unknown>>('SELECT * FROM outbox WHERE id > ? ORDER BY id', [before.outbox]);
  const mailIds = outbox.filter((o) => o.job === 'mail.send').map((o) => String((o.payload as { emailId: string }).emailId));
  const mails = (await all<Record<string, unknown>>('SELECT * FROM outbound_emails WHERE id = ANY(?::uuid[])', [mailIds])).map((m) => ({
    ...m,
    body_sealed: typeof m.body_sealed === 'string' ? decryptSecret(m.body_sealed) : m.body_sealed,
  }));
  if (mails.length !== mailIds.length) fail('an outbox mail.send names no mail');
  const idem = await all<Record<string, unknown> & { response_body: string; created_at: Date; expires_at: Date; key: string }>(
    `SELECT * FROM idempotency_keys WHERE key = ANY(?::uuid[]) ORDER BY endpoint LIKE '%/fund' DESC`,
    [[keys.fund, keys.release]],
  );
  if (idem.length !== 2) fail(`${idem.length} idempotency rows for the two keys`);
  for (const k of idem) {
    const answer = k.key === keys.fund ? fund : release;
    if (k.response_body !== answer.text) fail(`the stored answer of key ${k.key} is not the answer sent`);
    if (k.expires_at.getTime() - k.created_at.getTime() !== DAY_MS) fail(`key ${k.key} kept ${k.expires_at.getTime() - k.created_at.getTime()} ms, not 24 hours`);
  }
  return {
    answers: { fund: JSON.parse(fund.text) as unknown, release: JSON.parse(release.text) as unknown },
    milestones,
    deal,
    events,
    disbursements: disbursements.map((d) => ({ ...d, signature: 'checked' })),
    outbox: outbox.map(({ id: _id, ...o }) => o),
    mails,
    keys: idem.map(({ response_body: _body, ...k }) => k),
  };
}

/**
 * One flow through each side, compared (see the header). Answers the items left for the
 * load (the two used here taken out).
 */
export async function checkFloor(api: Target, floor: Target, seed: FundSeed, items: readonly FundItem[]): Promise<FundItem[]> {
  const a = items[0]!;
  const b = items.find((i) => i !== a && i.workspace === a.workspace);
  if (!b) throw new Error('check failed: the seed has no two deals of one workspace');
  const w = seed.workspaces[a.workspace]!;
  const named = (i: FundItem) => ({
    ws: w.id,
    deal: i.dealId,
    m_funded: i.fundMid,
    m_released: i.releaseMid,
    instruction_1: w.instructions[0],
    instruction_2: w.instructions[1],
    owner: w.ownerId,
    approver: w.approverId,
    counterparty: w.counterpartyId,
  });
  const rowsA = await flowAndRows('API', api.base, seed, a);
  const rowsB = await flowAndRows('floor', floor.base, seed, b);
  // Key ids and the key's own id appear inside the scope; both sides use the same key.
  const na = new Normaliser(named(a)).value(rowsA);
  const nb = new Normaliser(named(b)).value(rowsB);
  const diff = firstDifference(na, nb);
  if (diff) throw new Error(`check failed: the floor does not do what the API does: ${diff}`);
  const r = rowsA;
  console.log(
    `bench: floor check: one flow each (fund + release, keyed), the same answers and the same rows once ids and timestamps are related: ` +
      `${r.milestones.length} milestones, the deal, ${r.events.length} events (${r.events.map((e) => String(e.event)).join(', ')}), ` +
      `${r.disbursements.length} signed disbursements, ${r.outbox.length} outbox rows (${r.outbox.map((o) => String(o.job)).join(', ')}), ` +
      `${r.mails.length} mail, 2 idempotency keys (replayed byte for byte), no journal entry`,
  );
  return items.filter((i) => i !== a && i !== b);
}

/** After the load: see the header. Answers what it counted, for the report. */
export async function checkAfter(done: readonly FundItem[], workspaceIds: readonly string[]): Promise<{ flows: number; released: number }> {
  const fail = (msg: string): never => {
    throw new Error(`check failed after the load: ${msg}`);
  };
  const fundMids = done.map((i) => i.fundMid);
  const releaseMids = done.map((i) => i.releaseMid);
  const [funded] = await all<{ bad: number }>(
    `SELECT count(*)::int AS bad FROM deal_milestones m
      WHERE m.id = ANY(?::uuid[])
        AND (m.status <> 'funded' OR (SELECT count(*) FROM workspace_events e WHERE e.workspace_id = m.workspace_id AND e.entity_id = m.id AND e.event = 'milestone.funded') <> 1)`,
    [fundMids],
  );
  if (funded!.bad > 0) fail(`${funded!.bad} milestones of completed flows not funded exactly once`);
  const [released] = await all<{ bad: number }>(
    `SELECT count(*)::int AS bad FROM deal_milestones m
      WHERE m.id = ANY(?::uuid[])
        AND (m.status <> 'released'
          OR (SELECT count(*) FROM disbursements d WHERE d.milestone_id = m.id AND d.release_no = 1) <> 2
          OR (SELECT coalesce(sum(amount), 0) FROM disbursements d WHERE d.milestone_id = m.id) <> m.payout_amount
          OR (SELECT array_agg(split_no ORDER BY split_no) FROM disbursements d WHERE d.milestone_id = m.id) <> ARRAY[1, 2]
          OR (SELECT count(*) FROM workspace_events e WHERE e.workspace_id = m.workspace_id AND e.entity_id = m.id AND e.event = 'milestone.released') <> 1
          OR (SELECT count(*) FROM workspace_events e JOIN disbursements d ON d.id = e.entity_id
               WHERE e.workspace_id = m.workspace_id AND d.milestone_id = m.id AND e.event = 'disbursement.queued') <> 2)`,
    [releaseMids],
  );
  if (released!.bad > 0) fail(`${released!.bad} milestones of completed flows not released exactly once into 2 disbursements adding up to payout_amount`);
  const [anywhere] = await all<{ bad: number; released: number }>(
    `SELECT count(*) FILTER (WHERE n <> 2 OR total <> payout_amount OR releases <> 1)::int AS bad, count(*)::int AS released
       FROM (SELECT m.id, m.payout_amount, count(d.id) AS n, coalesce(sum(d.amount), 0) AS total, count(DISTINCT d.release_no) AS releases
               FROM deals x JOIN deal_milestones m ON m.deal_id = x.id LEFT JOIN disbursements d ON d.milestone_id = m.id
              WHERE x.workspace_id = ANY(?::uuid[]) AND x.title = ? AND m.status = 'released'
              GROUP BY m.id, m.payout_amount) r`,
    [workspaceIds, DEAL_TITLE],
  );
  if (anywhere!.bad > 0) fail(`${anywhere!.bad} released bench milestones without exactly one release into 2 disbursements adding up to payout_amount`);
  const { checkLedger } = await import('../../shared/ledger/index.js');
  const violations = await checkLedger(await benchDb());
  if (violations.length > 0) fail(`ledger: ${violations.length} violations, e.g. [${violations[0]!.rule}] ${violations[0]!.detail}`);
  console.log(
    `bench: after the load: ${fmtInt(done.length)} completed flows each funded once and released once into 2 disbursements adding up to payout_amount; ` +
      `${fmtInt(anywhere!.released)} released bench milestones in all, none twice; ledger: all invariants hold`,
  );
  return { flows: done.length, released: anywhere!.released };
}

/**
 * A floor at least as lean as its route (issue 43; bench/lib/statements.ts): a counting
 * copy of the API and of the floor server each run two flows (the first warms them), and
 * the second's statements and round trips are compared: the bench stops, reporting no
 * ratio, when the floor sends more. Answers the check and the items left for the load.
 */
export async function checkLean(env: NodeJS.ProcessEnv, seed: FundSeed, items: readonly FundItem[]): Promise<{ lean: LeanCheck; left: FundItem[] }> {
  const used = items.slice(0, 4);
  if (used.length < 4) throw new Error('check failed: the seed has too few deals for the statement count');
  const steps = (item: FundItem): CountedStep[] => {
    const w = seed.workspaces[item.workspace]!;
    const send = (name: string, path: string, body: string): CountedStep => ({
      step: name,
      run: async (base) => {
        const a = await post(base, path, w.key, randomUUID(), body);
        if (a.status !== 200) throw new Error(`check failed (statement count): ${name} answered ${a.status} ${a.text.slice(0, 300)}`);
      },
    });
    return [send('fund', fundPath(item), FUND_BODY), send('release', releasePath(item), JSON.stringify({ splits: splitsOf(w, item) }))];
  };
  const lean = await countFlows({ tag: 'bench', env, api: [steps(used[0]!), steps(used[1]!)], floor: [steps(used[2]!), steps(used[3]!)] });
  return { lean, left: items.slice(4) };
}

/**
 * The chaos workload's enterprise flows (issue 27), beside the consumer ones and under the
 * same faults: live workspaces (seed.ts) with counterparties and payout instructions that
 * staff verify; deals of 1 to 4 milestones (some at or above the four-eyes threshold) with
 * the fee on the workspace, on the counterparty or split; staff confirming live funding;
 * evidence from an operator; approvals by finance members (one, or two different ones for
 * four-eyes, some sent by two people at once); releases into 1 to 3 payouts to verified
 * instructions, which the payout worker settles; revisions and rejections; disputes ruled
 * release, refund or split; payouts failed by staff before the worker took them and
 * released again; a release racing a dispute; some milestones left at each stage.
 *
 * Every write carries an Idempotency-Key kept across its tries (send()): a cut connection,
 * a 5xx (Postgres cut), a 409 IDEMPOTENCY_KEY_IN_FLIGHT or a 429 (after Retry-After) is sent
 * again with it, so the log's 2xx answers are what happened (expected.ts).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, dataOf, type Actor, type Answer } from './client.js';

export interface Workspace {
  id: string;
  owner: Actor;
  operators: Actor[];
  finance: Actor[];
}

export interface EnterpriseSeed {
  /** Staff of the enterprise flows (an admin's personal key each). */
  staff: Actor[];
  workspaces: Workspace[];
  /** Every workspace's four-eyes threshold: milestones of this amount or more need two approvers. */
  fourEyes: number;
}

/** A counterparty of a workspace and its verified payout instructions. */
interface Counterparty {
  id: string;
  instructions: string[];
}

/** What the driver saw beside the log: flows that could not go on, and the races' winners. */
export const enterpriseRun = {
  flowErrors: [] as string[],
  /** Approvals sent by two finance members at once (four-eyes: both must count; one approver: one wins). */
  concurrentPairs: 0,
  race: { tried: 0, releaseWon: 0, disputeWon: 0, both: 0 },
  staffFails: { tried: 0, accepted: 0 },
};

/** The hooks main.ts gives: the payout-job fault after a release. */
export interface EnterpriseHooks {
  onReleased: (disbursementId: string) => void;
}

interface MilestoneAnswer {
  id: string;
  amount: number;
  status: string;
  approvals_required: number;
  seller_fee: number;
  payout_amount: number;
  disbursements: { id: string; amount: number; status: string }[];
}

type Plan =
  | 'unfunded'
  | 'funded'
  | 'evidence'
  | 'approved'
  | 'dispute-refund'
  | 'dispute-split'
  | 'dispute-release'
  | 'revision'
  | 'reject'
  | 'race'
  | 'fail-retry'
  | 'straight';

/** Of 20 milestones: one left at each early stage, 3 disputes, 2 send-backs, a race, 3 failed payouts, 7 straight releases. */
const PLANS: Plan[] = [
  'unfunded',
  'funded',
  'evidence',
  'approved',
  'dispute-refund',
  'dispute-split',
  'dispute-release',
  'revision',
  'reject',
  'race',
  'fail-retry',
  'fail-retry',
  'fail-retry',
  'straight',
  'straight',
  'straight',
  'straight',
  'straight',
  'straight',
  'straight',
];

const errorCode = (a: Answer): string => (a.body.error as { code?: string } | undefined)?.code ?? '';
const is2xx = (a: Answer): boolean => a.status >= 200 && a.status < 300;

/**
 * One logical request as a careful client sends it: one Idempotency-Key for every try of a
 * write; a 429 waits Retry-After, a 5xx (a Postgres connection cut under it: nothing was
 * committed) or a 409 IDEMPOTENCY_KEY_IN_FLIGHT (the first try of a cut connection still
 * running) is sent again with the same key.
 */
async function send(actor: Actor, method: 'GET' | 'POST', urlPath: string, body?: unknown, ws?: Workspace): Promise<Answer> {
  const idemKey = method === 'GET' ? undefined : randomUUID();
  for (let i = 0; ; i += 1) {
    const a = await call(method, urlPath, { key: actor.key, as: actor.id, body, idemKey, headers: ws ? { 'x-enterprise-account': ws.id } : undefined });
    const again = a.status === 429 || a.status >= 500 || (a.status === 409 && errorCode(a) === 'IDEMPOTENCY_KEY_IN_FLIGHT');
    if (!again || i >= 40) return a;
    await sleep(a.status === 429 ? 1000 * Math.min(30, Math.max(1, Number(a.headers.get('retry-after') ?? 1))) : 300 + Math.min(i, 10) * 200);
  }
}

/** A step that must succeed for the flow to go on: its answer, or an error naming it. */
async function must(what: string, a: Promise<Answer>): Promise<Answer> {
  const r = await a;
  if (!is2xx(r)) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  return r;
}

/**
 * A workspace's counterparties (2) and their payout instructions (3 each), created by its
 * operator and finance members and verified by staff. Resolves with what the deals use.
 */
export async function setupWorkspace(seed: EnterpriseSeed, w: number): Promise<Counterparty[]> {
  const ws = seed.workspaces[w]!;
  const out: Counterparty[] = [];
  for (let c = 0; c < 2; c += 1) {
    const staff = seed.staff[(w + c) % seed.staff.length]!;
    const name = `CV Mitra Chaos ${w}-${c}`;
    const made = await must('counterparty', send(ws.operators[c % ws.operators.length]!, 'POST', '/v1/enterprise/counterparties', { name }, ws));
    const id = String(dataOf(made).id);
    await must('counterparty verification', send(staff, 'POST', `/v1/admin/enterprise/counterparties/${id}/verify`, {}));
    const instructions: string[] = [];
    for (let k = 0; k < 3; k += 1) {
      const body = { label: `Rekening ${k + 1}`, counterparty_id: id, bank_name: ['BCA', 'BNI', 'Mandiri'][k]!, account_number: String(7_000_000_000 + w * 100 + c * 10 + k), account_holder: name };
      const p = await must('payout instruction', send(ws.finance[k % ws.finance.length]!, 'POST', '/v1/enterprise/payout-instructions', body, ws));
      const pid = String(dataOf(p).id);
      await must('payout instruction verification', send(staff, 'POST', `/v1/admin/enterprise/payout-instructions/${pid}/verify`, { destination_version: Number(dataOf(p).destination_version) }));
      instructions.push(pid);
    }
    out.push({ id, instructions });
  }
  return out;
}

/** `total` over `parts` payouts: equal shares, the remainder on the last, each at least 1. */
function shares(total: number, parts: number): number[] {
  const n = Math.max(1, Math.min(parts, total));
  const each = Math.floor(total / n);
  return Array.from({ length: n }, (_, i) => (i === n - 1 ? total - each * (n - 1) : each));
}

/** One deal: created and activated by an operator, then each milestone's own flow, all at once. */
export async function enterpriseDeal(n: number, seed: EnterpriseSeed, setups: Promise<Counterparty[]>[], hooks: EnterpriseHooks): Promise<void> {
  const w = n % seed.workspaces.length;
  try {
    const ws = seed.workspaces[w]!;
    const cps = await setups[w]!;
    const cp = cps[Math.floor(n / seed.workspaces.length) % cps.length]!;
    const op = ws.operators[n % ws.operators.length]!;
    const count = 1 + ((n * 7) % 4);
    const milestones = Array.from({ length: count }, (_, i) => {
      const fourEyes = (n + i) % 3 === 0;
      const amount = fourEyes ? seed.fourEyes + ((n * 31 + i * 17) % 40) * 500_000 : 1_000_000 + ((n * 13 + i * 7) % 60) * 250_000;
      return { title: `Tahap ${i + 1}`, amount };
    });
    const fee = n % 3 === 0 ? { fee_allocation: 'buyer' } : n % 3 === 1 ? { fee_allocation: 'seller' } : { fee_allocation: 'split', fee_buyer_percent: 10 + ((n * 7) % 80) };
    const created = await must('deal', send(op, 'POST', '/v1/enterprise/deals', { title: `Proyek chaos ${n}`, counterparty_id: cp.id, milestones, ...fee }, ws));
    const dealId = String((dataOf(created).deal as { id: string }).id);
    const activated = await must('activation', send(op, 'POST', `/v1/enterprise/deals/${dealId}/activate`, {}, ws));
    // One deal in 20 is cancelled before any funding (its milestones cancelled).
    if (n % 20 === 7) {
      await must('cancel', send(op, 'POST', `/v1/enterprise/deals/${dealId}/cancel`, {}, ws));
      return;
    }
    const ms = dataOf(activated).milestones as MilestoneAnswer[];
    await Promise.all(
      ms.map((m, i) =>
        milestoneFlow({ n, i, seed, ws, cp, dealId, m, hooks, plan: PLANS[(n * 7 + i * 3) % PLANS.length]! }).catch((err: unknown) => {
          enterpriseRun.flowErrors.push(`deal ${n} milestone ${i + 1}: ${err instanceof Error ? err.message : String(err)}`);
        }),
      ),
    );
  } catch (err) {
    enterpriseRun.flowErrors.push(`deal ${n}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

interface Flow {
  n: number;
  i: number;
  seed: EnterpriseSeed;
  ws: Workspace;
  cp: Counterparty;
  dealId: string;
  m: MilestoneAnswer;
  hooks: EnterpriseHooks;
  plan: Plan;
}

const milestoneOf = (a: Answer, id: string): MilestoneAnswer | undefined => ((dataOf(a).milestones ?? []) as MilestoneAnswer[]).find((x) => x.id === id);

async function milestoneFlow(f: Flow): Promise<void> {
  const { n, i, seed, ws, dealId, m, plan } = f;
  const staff = seed.staff[(n + i) % seed.staff.length]!;
  const op = ws.operators[(n + i) % ws.operators.length]!;
  const base = `/v1/enterprise/deals/${dealId}/milestones/${m.id}`;
  const evidence = (round: number) => must('evidence', send(op, 'POST', `${base}/submit-evidence`, { summary: `Bukti tahap ${i + 1}, kiriman ${round}` }, ws));
  const dispute = () => send(op, 'POST', `${base}/dispute`, { reason: 'Barang tidak sesuai pesanan' }, ws);
  const rule = (body: Record<string, unknown>) => must('ruling', send(staff, 'POST', `/v1/admin/enterprise/milestones/${m.id}/resolve-dispute`, { ...body, note: 'chaos ruling' }));

  if (plan === 'unfunded') return;
  await must('funding confirmation', send(staff, 'POST', `/v1/admin/enterprise/milestones/${m.id}/confirm-funding`, {}));
  if (plan === 'funded') return;
  if (plan === 'dispute-refund') {
    await must('dispute', dispute());
    await rule({ outcome: 'refund' });
    return;
  }
  await evidence(1);
  if (plan === 'evidence') return;
  if (plan === 'dispute-split') {
    await must('dispute', dispute());
    const releaseAmount = Math.floor((m.amount * 0.6) / 1000) * 1000;
    await rule({ outcome: 'split', release_amount: releaseAmount });
    await release(f, releaseAmount - m.seller_fee);
    return;
  }
  if (plan === 'revision' || plan === 'reject') {
    // Four-eyes: one approval first, then the other approver sends it back (the round closes).
    if (m.approvals_required === 2) await must('first approval', decide(f, 0, 'approve'));
    await must('send-back', decide(f, 1, plan));
    await evidence(2);
  }
  if (!(await approve(f))) return;
  if (plan === 'approved') return;
  if (plan === 'dispute-release') {
    await must('dispute', dispute());
    await rule({ outcome: 'release' });
    await release(f, m.payout_amount);
    return;
  }
  if (plan === 'race') {
    // A release and a dispute at once: one of them wins.
    enterpriseRun.race.tried += 1;
    const [r, d] = await Promise.all([release(f, m.payout_amount, { stall: false, strict: false }), dispute()]);
    if (is2xx(r) && is2xx(d)) enterpriseRun.race.both += 1;
    else if (is2xx(r)) enterpriseRun.race.releaseWon += 1;
    else if (is2xx(d)) {
      enterpriseRun.race.disputeWon += 1;
      await rule({ outcome: 'release' });
      await release(f, m.payout_amount);
    }
    return;
  }
  const released = await release(f, m.payout_amount, { stall: plan !== 'fail-retry' });
  if (plan !== 'fail-retry' || !is2xx(released)) return;
  // Staff fail the new payouts before the worker takes them (those it took already settle); the returned money is released again.
  const fresh = milestoneOf(released, m.id)?.disbursements ?? [];
  enterpriseRun.staffFails.tried += fresh.length;
  const fails = await Promise.all(fresh.map((d) => send(staff, 'POST', `/v1/admin/enterprise/disbursements/${d.id}/fail`, { reason: 'Rekening ditolak bank (chaos)' })));
  const returned = fails.filter(is2xx).reduce((s, a) => s + Number(dataOf(a).amount), 0);
  enterpriseRun.staffFails.accepted += fails.filter(is2xx).length;
  if (returned > 0) await release(f, returned);
}

/** A decision by the `k`-th of the milestone's two finance approvers. */
function decide(f: Flow, k: number, decision: 'approve' | 'reject' | 'revision'): Promise<Answer> {
  const fin = f.ws.finance[(f.n + f.i + k) % f.ws.finance.length]!;
  return send(fin, 'POST', `/v1/enterprise/approvals/${f.m.id}/decide`, { decision, note: `chaos ${decision}` }, f.ws);
}

const statusOf = (a: Answer): string => (dataOf(a).item as { status?: string } | undefined)?.status ?? '';

/**
 * Approval as the milestone needs it: one approver, or two different ones (four-eyes); on
 * every other milestone both are sent at once (four-eyes: both count; one approver: one
 * wins, the other is refused). True once an answer says approved.
 */
async function approve(f: Flow): Promise<boolean> {
  const together = (f.n + f.i) % 2 === 0;
  if (together) {
    enterpriseRun.concurrentPairs += 1;
    const answers = await Promise.all([decide(f, 0, 'approve'), decide(f, 1, 'approve')]);
    return answers.some((a) => is2xx(a) && statusOf(a) === 'approved');
  }
  const first = await must('approval', decide(f, 0, 'approve'));
  if (statusOf(first) === 'approved') return true;
  const second = await must('second approval', decide(f, 1, 'approve'));
  return statusOf(second) === 'approved';
}

/**
 * A release of `due` into 1 to 3 payouts to the counterparty's verified instructions; its
 * first new payout is offered to the payout-job fault unless `stall` is false. A refusal
 * ends the flow unless `strict` is false (a release racing a dispute may lose). The answer
 * comes back with only this release's new payouts on the milestone.
 */
async function release(f: Flow, due: number, opts: { stall?: boolean; strict?: boolean } = {}): Promise<Answer> {
  const fin = f.ws.finance[(f.n + f.i + 2) % f.ws.finance.length]!;
  const amounts = shares(due, 1 + ((f.n + f.i) % 3));
  const start = (f.n + f.i + f.m.disbursements.length) % f.cp.instructions.length;
  const splits = amounts.map((amount, k) => ({ payout_instruction_id: f.cp.instructions[(start + k) % f.cp.instructions.length]!, amount }));
  const a = await send(fin, 'POST', `/v1/enterprise/deals/${f.dealId}/milestones/${f.m.id}/release`, { splits }, f.ws);
  if (!is2xx(a)) {
    if (opts.strict !== false) throw new Error(`release: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
    return a;
  }
  const known = new Set(f.m.disbursements.map((d) => d.id));
  const fresh = (milestoneOf(a, f.m.id)?.disbursements ?? []).filter((d) => !known.has(d.id));
  f.m.disbursements = [...f.m.disbursements, ...fresh];
  if (opts.stall !== false && fresh[0]) f.hooks.onReleased(fresh[0].id);
  const data = dataOf(a);
  const ms = (data.milestones as MilestoneAnswer[]).map((x) => (x.id === f.m.id ? { ...x, disbursements: fresh } : x));
  return { ...a, body: { ...a.body, data: { ...data, milestones: ms } } };
}

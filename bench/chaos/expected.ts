/**
 * The expected state, computed from the request log alone: each escrow's status from the
 * answers about it (a paid callback acknowledged with 200 makes its escrow at least
 * `paid`), each withdrawal's and payment-service order's from its creation and the staff
 * answers, the money at the edges (flagged, late, settled payments), and every balance
 * from those statuses.
 */
import type { Logged } from './client.js';

/** A payment link from a pay answer (escrow or payment-service order). */
interface Link {
  paymentId: string;
  total: number;
  buyer: string;
}

export interface Expected {
  orders: Map<string, { status: string; total: number; buyer: string }>;
  escrows: Map<string, { status: string; amount: number; buyer: string; seller: string; fee: number }>;
  withdrawals: Map<string, { status: string; user: string; amount: number }>;
  balances: Map<string, number>;
  paidOrders: Set<string>;
  /** Links whose paid report differed from their total: the reported amount. */
  mismatched: Map<string, number>;
  /** Late manual claims (answered 2xx with late_claim). */
  lateClaims: Set<string>;
  /** Staff credits and returns accepted, by payment id: what, and the amount it moves. */
  settled: Map<string, { how: 'credit' | 'mark-returned'; amount: number }>;
  /** Payments a second staff move (another key) was also accepted for: money moved twice. */
  settledTwice: string[];
}

/**
 * Replays the successful answers in the order they were given: an escrow's status is the
 * last state an answer reported; money follows the answers (a release credits the seller
 * the amount less the fee the answer states; a refund ruling credits the buyer; a
 * withdrawal takes its amount and a rejection gives it back).
 */
export function expectedFromLog(log: readonly Logged[]): Expected {
  const ok = log.filter((e) => typeof e.status === 'number' && e.status >= 200 && e.status < 300).sort((a, b) => a.seq - b.seq);
  const escrows: Expected['escrows'] = new Map();
  const withdrawals: Expected['withdrawals'] = new Map();
  const paidOrders = new Set<string>();
  const escrowOfOrder = new Map<string, string>();
  const orders: Expected['orders'] = new Map();
  const serviceOrderOf = new Map<string, string>();
  const ORDER_RANK: Record<string, number> = { awaiting_payment: 0, pending_review: 1, paid: 2, processing: 3, delivered: 4, refunded: 4, cancelled: 4 };
  const advanceOrder = (id: string, status: string) => {
    const o = orders.get(id);
    if (o && (ORDER_RANK[status] ?? -1) > (ORDER_RANK[o.status] ?? -1)) o.status = status;
  };
  const disputeEscrow = new Map<string, string>();
  // A status may only move forward: a late answer (a replay of an earlier move) never moves it back.
  const RANK: Record<string, number> = { pending_payment: 0, paid: 1, sent: 2, received: 3, disputed: 4, released: 5, refunded: 5, cancelled: 5 };
  const advance = (id: string, status: string) => {
    const x = escrows.get(id);
    if (x && (RANK[status] ?? -1) > (RANK[x.status] ?? -1)) x.status = status;
  };
  // Links first: a callback may be logged before the answer of the pay it pays (sent early).
  const links = new Map<string, Link>();
  const linkById = new Map<string, Link>();
  for (const e of ok) {
    if (!/^\/api\/(escrows|jasabayar)\/[^/]+\/pay$/.test(e.path)) continue;
    const data: Record<string, unknown> = (e.answer as { data?: Record<string, unknown> } | null)?.data ?? {};
    const link: Link = { paymentId: String(data.payment_link_id), total: Number(data.amount), buyer: e.as ?? '' };
    links.set(String(data.gateway_order_id), link);
    linkById.set(link.paymentId, link);
    (e.path.startsWith('/api/escrows/') ? escrowOfOrder : serviceOrderOf).set(String(data.gateway_order_id), e.path.split('/')[3]!);
  }
  const mismatched = new Map<string, number>();
  const lateClaims = new Set<string>();
  const settled: Expected['settled'] = new Map();
  const settledKey = new Map<string, string | null>();
  const settledTwice: string[] = [];
  for (const e of ok) {
    const data: Record<string, unknown> = (e.answer as { data?: Record<string, unknown> } | null)?.data ?? {};
    const parts = e.path.split('/');
    if (e.path === '/api/jasabayar' && e.method === 'POST') {
      const id = String(data.id);
      if (!orders.has(id)) orders.set(id, { status: 'awaiting_payment', total: Number(data.total), buyer: e.as ?? '' });
    } else if (/^\/api\/jasabayar\/[^/]+\/payment-status$/.test(e.path) && data.status === 'paid') {
      advanceOrder(parts[3]!, 'paid');
    } else if (/^\/v1\/admin\/jasabayar\/[^/]+\/(start|process|deliver|refund)$/.test(e.path)) {
      // { order } (decision 0016), or the bare order of older versions.
      const status = (data.order as { status?: unknown } | undefined)?.status ?? data.status;
      if (typeof status === 'string') advanceOrder(parts[4]!, status);
    } else if (e.path === '/api/escrows/from-link') {
      const id = String(data.id);
      if (!escrows.has(id)) escrows.set(id, { status: 'pending_payment', amount: Number(data.amount), buyer: String(data.buyer_id), seller: String(data.seller_id), fee: Number.NaN });
    } else if (/^\/api\/webhooks\//.test(e.path)) {
      const b = JSON.parse(typeof e.body === 'string' ? e.body : '{}') as { status?: string; gateway_order_id?: string; amount?: number };
      const link = b.gateway_order_id ? links.get(b.gateway_order_id) : undefined;
      // A paid report for a link no pay answered (a charge of a cut try) pays nothing; one whose
      // amount differs from the link's total is flagged for staff.
      if (b.status === 'paid' && link && typeof b.amount === 'number' && b.amount !== link.total) {
        mismatched.set(link.paymentId, b.amount);
      } else if (b.status === 'paid' && b.gateway_order_id && link) {
        paidOrders.add(b.gateway_order_id);
        const id = escrowOfOrder.get(b.gateway_order_id);
        if (id) advance(id, 'paid');
        const so = serviceOrderOf.get(b.gateway_order_id);
        if (so) advanceOrder(so, 'paid');
      }
    } else if (/^\/api\/escrows\/[^/]+\/claim-payment$/.test(e.path)) {
      if (data.late_claim === true) lateClaims.add(String(data.id));
    } else if (/^\/v1\/admin\/payments\/[^/]+\/(credit|mark-returned)$/.test(e.path)) {
      const id = parts[4]!;
      const link = linkById.get(id);
      if (settledKey.has(id)) {
        if (settledKey.get(id) !== e.key) settledTwice.push(id);
      } else if (link) {
        settledKey.set(id, e.key);
        settled.set(id, { how: e.path.endsWith('/credit') ? 'credit' : 'mark-returned', amount: mismatched.get(id) ?? link.total });
      }
    } else if (/^\/api\/escrows\/[^/]+(\/(send|confirm-received|release|cancel))?$/.test(e.path) && typeof data.status === 'string') {
      advance(parts[3]!, data.status);
      const x = escrows.get(parts[3]!);
      if (x && data.status === 'released' && data.platform_fee !== undefined && data.platform_fee !== null) x.fee = Number(data.platform_fee);
    } else if (/^\/v1\/escrows\/[^/]+\/dispute$/.test(e.path)) {
      disputeEscrow.set(String(data.id), parts[3]!);
      advance(parts[3]!, 'disputed');
    } else if (e.path === '/v1/disputes' && Array.isArray(e.answer && (e.answer as { data?: unknown }).data)) {
      for (const d of (e.answer as { data: { id: string; escrow_id: string }[] }).data) {
        disputeEscrow.set(d.id, d.escrow_id);
        advance(d.escrow_id, 'disputed');
      }
    } else if (/^\/v1\/admin\/disputes\/[^/]+\/resolve$/.test(e.path)) {
      const id = disputeEscrow.get(parts[4]!);
      const outcome = (e.body as { outcome?: string }).outcome;
      if (id) advance(id, outcome === 'release' ? 'released' : outcome === 'refund' ? 'refunded' : 'disputed');
    } else if (e.path === '/v1/withdrawals' && e.method === 'POST') {
      const id = String(data.id);
      if (!withdrawals.has(id)) withdrawals.set(id, { status: 'pending', user: e.as ?? String(data.user_id), amount: Number(data.amount) });
    } else if (/^\/v1\/admin\/withdrawals\/[^/]+\/(approve|reject)$/.test(e.path)) {
      const w = withdrawals.get(parts[4]!);
      if (w && w.status === 'pending') w.status = e.path.endsWith('/reject') ? 'rejected' : 'approved';
    }
  }
  // A pay whose first try was cut after its payment link committed (decision 0015) and
  // whose charge an early callback then paid answers its retry 409 with the escrow's
  // status: the service says it is paid, though no pay answer named its gateway order.
  for (const e of log) {
    const err = (e.answer as { error?: { code?: string; status?: string } } | null)?.error;
    if (e.status === 409 && err?.code === 'INVALID_STATE' && err.status === 'paid' && /^\/api\/escrows\/[^/]+\/pay$/.test(e.path)) advance(e.path.split('/')[3]!, 'paid');
  }
  // Money follows the statuses: released pays the seller the amount less its fee, refunded
  // pays the buyer back; a withdrawal takes its amount unless rejected.
  const balances = new Map<string, number>();
  const add = (user: string, delta: number) => balances.set(user, (balances.get(user) ?? 0) + delta);
  for (const x of escrows.values()) {
    if (x.status === 'released') add(x.seller, x.amount - x.fee);
    if (x.status === 'refunded') add(x.buyer, x.amount);
  }
  for (const w of withdrawals.values()) if (w.status !== 'rejected') add(w.user, -w.amount);
  // A refunded order gives its total back to the buyer's balance.
  for (const o of orders.values()) if (o.status === 'refunded') add(o.buyer, o.total);
  // Staff credits put the reported amount (a mismatch) or the claimed total (a late claim) on the buyer's balance, once.
  for (const [id, x] of settled) if (x.how === 'credit') add(linkById.get(id)!.buyer, x.amount);
  return { orders, escrows, withdrawals, balances, paidOrders, mismatched, lateClaims, settled, settledTwice };
}

// ---- Enterprise (issue 27) -------------------------------------------------------------------

/** Milestone statuses whose money is held (shared/deals/states.ts HELD). */
const ENT_HELD = ['funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed'];

export interface ExpectedMilestone {
  id: string;
  deal: string;
  amount: number;
  buyerFee: number;
  sellerFee: number;
  fundingAmount: number;
  payoutAmount: number;
  approvalsRequired: number;
  status: string;
  funded: boolean;
  /** Who submitted the current evidence, and who approved in its round. */
  submitter: string | null;
  approvers: Set<string>;
  ruling: string | null;
  refunded: number;
  /** What failed payouts brought back and no release has sent again yet. */
  returned: number;
  releases: number;
}

export interface ExpectedDisbursement {
  milestone: string;
  amount: number;
  failed: boolean;
}

/** Each ledger account's share of one milestone (entries about it and about its payouts). */
export interface MilestoneMoney {
  held: number;
  feesHeld: number;
  inFlight: number;
  sent: number;
  fees: number;
  refunds: number;
  funding: number;
}

export interface ExpectedEnterprise {
  deals: Map<string, { counterparty: string; milestones: string[] }>;
  milestones: Map<string, ExpectedMilestone>;
  disbursements: Map<string, ExpectedDisbursement>;
  /** 2xx answers the log cannot explain: a move from a state that does not allow it, splits that do not add up, payouts that differ from the splits. */
  impossible: string[];
  moves: { fundings: number; evidence: number; approvals: number; sendBacks: number; releases: number; reReleases: number; disputes: number; rulings: Record<string, number>; staffFailed: number; cancelledDeals: number };
}

/** What the ledger must hold for a milestone once every payout is settled or failed (shared/payouts/postings.ts). */
export function expectedMoney(m: ExpectedMilestone, disbursements: Iterable<ExpectedDisbursement>): MilestoneMoney {
  const held = ENT_HELD.includes(m.status);
  let sent = 0;
  for (const d of disbursements) if (d.milestone === m.id && !d.failed) sent += d.amount;
  return {
    held: held ? m.amount - m.refunded : m.status === 'released' ? m.returned : 0,
    feesHeld: held ? m.buyerFee : 0,
    inFlight: 0,
    sent,
    fees: m.status === 'released' ? m.buyerFee + m.sellerFee : 0,
    refunds: m.refunded + (m.ruling === 'refund' ? m.buyerFee : 0),
    funding: m.funded ? -m.fundingAmount : 0,
  };
}

interface MilestoneAnswer {
  id: string;
  amount: number;
  status: string;
  approvals_required: number;
  buyer_fee: number;
  seller_fee: number;
  funding_amount: number;
  payout_amount: number;
  disbursements?: { id: string; amount: number }[];
}

/**
 * The enterprise side from the log alone: replays every 2xx answer (once per
 * Idempotency-Key: a replay is the same move) in the order the requests were sent, as
 * moves of the milestone state table, each checked against the state the log has reached
 * (a 2xx the table does not allow is `impossible`). The deal answers give the milestones'
 * amounts and fee shares; a release's answer names its new payouts; a payout ends failed
 * when staff's fail was accepted, settled otherwise (the drain leaves none open).
 */
export function expectedEnterprise(log: readonly Logged[]): ExpectedEnterprise {
  const seen = new Set<string>();
  const ok = log
    .filter((e) => typeof e.status === 'number' && e.status >= 200 && e.status < 300 && /^\/v1\/(admin\/)?enterprise\//.test(e.path))
    .sort((a, b) => a.seq - b.seq)
    .filter((e) => {
      if (e.key === null) return true;
      if (seen.has(e.key)) return false;
      seen.add(e.key);
      return true;
    });
  const deals: ExpectedEnterprise['deals'] = new Map();
  const milestones: ExpectedEnterprise['milestones'] = new Map();
  const disbursements: ExpectedEnterprise['disbursements'] = new Map();
  const impossible: string[] = [];
  const moves: ExpectedEnterprise['moves'] = { fundings: 0, evidence: 0, approvals: 0, sendBacks: 0, releases: 0, reReleases: 0, disputes: 0, rulings: {}, staffFailed: 0, cancelledDeals: 0 };
  const verified = new Set<string>();
  const waiting = new Set<string>(); // deals activated before their counterparty was verified (terms_review)
  const move = (e: Logged, id: string, from: readonly string[], to: string): ExpectedMilestone | undefined => {
    const m = milestones.get(id);
    if (!m) {
      impossible.push(`${e.method} ${e.path} (seq ${e.seq}): answered ${String(e.status)} for a milestone no answer created`);
      return undefined;
    }
    if (!from.includes(m.status)) {
      impossible.push(`${e.method} ${e.path} (seq ${e.seq}): answered ${String(e.status)} while the log has the milestone ${m.status}`);
      return undefined;
    }
    m.status = to;
    return m;
  };
  const activate = (dealId: string) => {
    for (const id of deals.get(dealId)?.milestones ?? []) {
      const m = milestones.get(id)!;
      if (m.status === 'draft') m.status = 'awaiting_funding';
    }
  };
  for (const e of ok) {
    const data: Record<string, unknown> = (e.answer as { data?: Record<string, unknown> } | null)?.data ?? {};
    const body = (e.body ?? {}) as Record<string, unknown>;
    const p = e.path.split('/');
    if (e.method !== 'POST') continue;
    if (/^\/v1\/admin\/enterprise\/counterparties\/[^/]+\/verify$/.test(e.path)) {
      verified.add(p[5]!);
      for (const d of waiting) {
        if (deals.get(d)?.counterparty === p[5]) {
          waiting.delete(d);
          activate(d);
        }
      }
    } else if (e.path === '/v1/enterprise/deals') {
      const deal = data.deal as { id: string };
      const ms = data.milestones as MilestoneAnswer[];
      deals.set(deal.id, { counterparty: String(body.counterparty_id), milestones: ms.map((m) => m.id) });
      for (const m of ms) {
        milestones.set(m.id, {
          id: m.id,
          deal: deal.id,
          amount: m.amount,
          buyerFee: m.buyer_fee,
          sellerFee: m.seller_fee,
          fundingAmount: m.funding_amount,
          payoutAmount: m.payout_amount,
          approvalsRequired: m.approvals_required,
          status: 'draft',
          funded: false,
          submitter: null,
          approvers: new Set(),
          ruling: null,
          refunded: 0,
          returned: 0,
          releases: 0,
        });
      }
    } else if (/^\/v1\/enterprise\/deals\/[^/]+\/activate$/.test(e.path)) {
      const deal = deals.get(p[4]!);
      if (!deal) continue;
      // Activation fixes the approvals each milestone needs (the four-eyes threshold then).
      for (const m of (data.milestones ?? []) as MilestoneAnswer[]) {
        const x = milestones.get(m.id);
        if (x) Object.assign(x, { approvalsRequired: m.approvals_required, buyerFee: m.buyer_fee, sellerFee: m.seller_fee, fundingAmount: m.funding_amount, payoutAmount: m.payout_amount });
      }
      if (verified.has(deal.counterparty)) activate(p[4]!);
      else waiting.add(p[4]!);
    } else if (/^\/v1\/enterprise\/deals\/[^/]+\/cancel$/.test(e.path)) {
      moves.cancelledDeals += 1;
      waiting.delete(p[4]!);
      for (const id of deals.get(p[4]!)?.milestones ?? []) move(e, id, ['draft', 'awaiting_funding'], 'cancelled');
    } else if (/^\/v1\/admin\/enterprise\/milestones\/[^/]+\/confirm-funding$/.test(e.path)) {
      const m = move(e, p[5]!, ['awaiting_funding'], 'funded');
      if (m) {
        m.funded = true;
        moves.fundings += 1;
      }
    } else if (/^\/v1\/enterprise\/deals\/[^/]+\/milestones\/[^/]+\/submit-evidence$/.test(e.path)) {
      const m = move(e, p[6]!, ['funded', 'revision_requested'], 'evidence_submitted');
      if (m) {
        m.submitter = e.as;
        m.approvers = new Set();
        moves.evidence += 1;
      }
    } else if (/^\/v1\/enterprise\/approvals\/[^/]+\/decide$/.test(e.path)) {
      const m = milestones.get(p[4]!);
      const decision = String(body.decision);
      if (m && m.status === 'evidence_submitted' && (e.as === m.submitter || (e.as !== null && m.approvers.has(e.as)))) {
        impossible.push(`${e.method} ${e.path} (seq ${e.seq}): a ${decision} by ${e.as ?? '?'} accepted although they ${e.as === m.submitter ? 'submitted the evidence' : 'already approved this round'}`);
      } else if (decision === 'approve') {
        const x = move(e, p[4]!, ['evidence_submitted'], 'evidence_submitted');
        if (x) {
          x.approvers.add(e.as ?? `?${e.seq}`);
          moves.approvals += 1;
          if (x.approvers.size >= x.approvalsRequired) x.status = 'approved';
        }
      } else if (move(e, p[4]!, ['evidence_submitted'], 'revision_requested')) moves.sendBacks += 1;
    } else if (/^\/v1\/enterprise\/deals\/[^/]+\/milestones\/[^/]+\/dispute$/.test(e.path)) {
      if (move(e, p[6]!, ['funded', 'evidence_submitted', 'approved'], 'disputed')) moves.disputes += 1;
    } else if (/^\/v1\/admin\/enterprise\/milestones\/[^/]+\/resolve-dispute$/.test(e.path)) {
      const outcome = String(body.outcome);
      const m = move(e, p[5]!, ['disputed'], outcome === 'refund' ? 'cancelled' : 'approved');
      if (m) {
        m.ruling = outcome;
        m.refunded = outcome === 'refund' ? m.amount : outcome === 'split' ? m.amount - Number(body.release_amount) : 0;
        moves.rulings[outcome] = (moves.rulings[outcome] ?? 0) + 1;
      }
    } else if (/^\/v1\/enterprise\/deals\/[^/]+\/milestones\/[^/]+\/release$/.test(e.path)) {
      const m = milestones.get(p[6]!);
      const splits = (body.splits ?? []) as { amount: number }[];
      const sum = splits.reduce((s, x) => s + x.amount, 0);
      const again = m?.status === 'released' && m.returned > 0;
      const due = m ? (again ? m.returned : m.payoutAmount - m.refunded) : 0;
      if (!move(e, p[6]!, again ? ['released'] : ['approved'], 'released') || !m) continue;
      if (sum !== due) impossible.push(`${e.method} ${e.path} (seq ${e.seq}): splits of ${sum} accepted where ${due} was due`);
      if (again) {
        m.returned = 0;
        moves.reReleases += 1;
      } else moves.releases += 1;
      m.releases += 1;
      const answered = ((data.milestones ?? []) as MilestoneAnswer[]).find((x) => x.id === m.id)?.disbursements ?? [];
      const fresh = answered.filter((d) => !disbursements.has(d.id));
      for (const d of fresh) disbursements.set(d.id, { milestone: m.id, amount: d.amount, failed: false });
      const want = splits.map((x) => x.amount).sort((a, b) => a - b).join(',');
      const got = fresh.map((d) => d.amount).sort((a, b) => a - b).join(',');
      if (want !== got) impossible.push(`${e.method} ${e.path} (seq ${e.seq}): splits ${want} answered with new payouts ${got || 'none'}`);
    } else if (/^\/v1\/admin\/enterprise\/disbursements\/[^/]+\/fail$/.test(e.path)) {
      const d = disbursements.get(p[5]!);
      if (!d || d.failed) {
        impossible.push(`${e.method} ${e.path} (seq ${e.seq}): a fail accepted for a payout ${d ? 'already failed' : 'no release answered'}`);
        continue;
      }
      d.failed = true;
      milestones.get(d.milestone)!.returned += d.amount;
      moves.staffFailed += 1;
    }
  }
  return { deals, milestones, disbursements, impossible, moves };
}

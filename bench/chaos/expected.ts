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

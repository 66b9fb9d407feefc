/**
 * Money at the edges (one escrow flow in 25 each): late manual transfers after a cancel,
 * credited by staff; short and long gateway payments, credited or marked returned by
 * staff; callbacks sent before their pay has answered. A second staff member does the
 * moves, so the first one's 300 requests a minute stay for rulings; a 429 is sent again
 * after `Retry-After`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { call, dataOf, sandboxCallback, type Actor, type Answer } from './client.js';
import { AMOUNT_MIN, createEscrow } from './workload.js';

/** The manual bank-transfer gateway the chaos setup adds (no surcharge; staff settle its claims). */
export const MANUAL_GATEWAY = 'chaos_manual_bca';

/** What the edge flows need beyond the users: a second staff member, buyers of their own for the early callbacks, the database. */
export interface Edge {
  /** Staff for the edge flows (the first admin's key is busy with rulings and order moves, 300 a minute). */
  staff: Actor;
  /** Buyers used only by the early-callback flows (their charges are found by amount). */
  racers: Actor[];
  db: Knex;
}

/** Early callbacks: how many were sent before their pay had answered, of how many tried. */
export const racing = { tried: 0, beforeCommit: 0 };

/** A staff move of the edge flows, sent again after `Retry-After` when it is rate limited. */
async function staffMove(staff: Actor, urlPath: string, body: Record<string, unknown>): Promise<Answer> {
  for (let i = 0; ; i += 1) {
    const a = await call('POST', urlPath, { key: staff.key, as: staff.id, idem: true, body });
    if (a.status !== 429 || i >= 5) return a;
    await sleep(1000 * Math.min(30, Math.max(1, Number(a.headers.get('retry-after') ?? 1))));
  }
}

/**
 * A manual transfer claimed after the escrow was cancelled: the buyer opens a manual
 * bank-transfer payment, the seller cancels before the buyer claims, the buyer claims late
 * (recorded, 2xx), staff credit it to the buyer's balance, and a second credit is refused.
 */
export async function lateManualTransfer(n: number, users: Actor[], edge: Edge): Promise<void> {
  const seller = users[n % users.length]!;
  let buyer = users[(n * 13 + 7) % users.length]!;
  if (buyer.id === seller.id) buyer = users[(n + 1) % users.length]!;
  const escrowId = await createEscrow(n, buyer, seller, AMOUNT_MIN + (n % 30) * 5_000);
  if (escrowId === null) return;
  const pay = await call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'bank_transfer', provider: MANUAL_GATEWAY } });
  if (pay.status !== 201) return;
  const paymentId = String(dataOf(pay).payment_link_id);
  const cancelled = await call('POST', `/api/escrows/${escrowId}/cancel`, { key: seller.key, as: seller.id, idem: true, body: { reason: 'Stok habis' } });
  if (cancelled.status !== 200) return;
  const claim = await call('POST', `/api/escrows/${escrowId}/claim-payment`, { key: buyer.key, as: buyer.id, idem: true, body: { reference: `TRF-CHAOS-${n}` } });
  if (claim.status < 200 || claim.status >= 300) return;
  await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/credit`, { note: 'late transfer, credited to the buyer' });
  // Another click (another key): refused, the money is credited once.
  await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/credit`, { note: 'second click' });
}

/**
 * A short or long gateway payment: the sandbox reports paid with less or more than the
 * link's total (twice), the worker flags it, and staff credit the reported amount to the
 * buyer or mark it returned; a second move is refused.
 */
export async function wrongAmount(n: number, users: Actor[], edge: Edge): Promise<void> {
  const seller = users[n % users.length]!;
  let buyer = users[(n * 17 + 3) % users.length]!;
  if (buyer.id === seller.id) buyer = users[(n + 1) % users.length]!;
  const escrowId = await createEscrow(n, buyer, seller, AMOUNT_MIN + (n % 30) * 5_000);
  if (escrowId === null) return;
  const pay = await call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } });
  if (pay.status !== 201) return;
  const paymentId = String(dataOf(pay).payment_link_id);
  const order = String(dataOf(pay).gateway_order_id);
  const total = Number(dataOf(pay).amount);
  const kind = Math.floor(n / 25) % 4;
  const reported = kind % 2 === 0 ? total - 1_000 : total + 2_500;
  await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', reported));
  await call('POST', '/api/webhooks/payment', sandboxCallback(order, 'paid', reported));
  const move = kind < 2 ? 'credit' : 'mark-returned';
  const note = move === 'credit' ? 'reported amount credited to the buyer' : 'returned to the payer by bank transfer, ref CHAOS';
  // Refused (409) until the worker has flagged the mismatch.
  for (let i = 0; i < 120; i += 1) {
    const a = await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/${move}`, { note });
    if (a.status !== 409) break;
    await sleep(500);
  }
  await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/${move}`, { note: 'second click' });
}

/**
 * A callback that races its payment: the driver, standing for a fast gateway, watches the
 * sandbox's charges and sends the paid callback and a redelivery the moment the charge for
 * this payment exists, while `pay` has not answered yet (the link's row is committed before
 * the gateway is called, decision 0015; its answer is recorded after), with the other
 * flows' traffic going on; then one more redelivery after the answer. The payment must end
 * paid, once.
 */
export async function earlyCallback(n: number, users: Actor[], edge: Edge, k: number): Promise<void> {
  const seller = users[n % users.length]!;
  const buyer = edge.racers[k % edge.racers.length]!;
  // An amount no other flow uses (others stay under 260,000), so its charge is found by its total.
  const amount = 400_007 + k * 1_000;
  const total = amount + Math.ceil((amount * 7) / 1000); // the sandbox gateway's 0.7%
  const escrowId = await createEscrow(n, buyer, seller, amount);
  if (escrowId === null) return;
  racing.tried += 1;
  let answered = false;
  const payP = call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } }).finally(() => {
    answered = true;
  });
  let order: string | null = null;
  while (order === null && !answered) {
    const charge = await edge.db('sandbox_charges').where({ amount: total }).orderBy('created_at', 'desc').first<{ gateway_order_id: string } | undefined>('gateway_order_id');
    if (charge) order = charge.gateway_order_id;
    else await sleep(5);
  }
  if (order !== null) {
    // The gateway's own record says paid (its status API answers so), then it calls back twice.
    await edge.db('sandbox_charges').where({ gateway_order_id: order }).update({ status: 'paid', updated_at: new Date() });
    const early = !answered;
    await Promise.all([call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', total)), call('POST', '/api/webhooks/ipn', sandboxCallback(order, 'paid', total))]);
    if (early) racing.beforeCommit += 1;
  }
  const pay = await payP;
  if (pay.status !== 201) return;
  const paidOrder = String(dataOf(pay).gateway_order_id);
  if (paidOrder !== order) await edge.db('sandbox_charges').where({ gateway_order_id: paidOrder }).update({ status: 'paid', updated_at: new Date() });
  // The gateway's retry after the answer (and the callback itself, if the charge seen was a cut try's).
  await call('POST', '/api/webhooks/universal', sandboxCallback(paidOrder, 'paid', total));
  for (let i = 0; i < 120; i += 1) {
    const st = await call('GET', `/api/escrows/${escrowId}/payment-status`, { key: buyer.key, as: buyer.id });
    if (st.status === 200 && dataOf(st).status === 'paid') break;
    await sleep(500);
  }
}

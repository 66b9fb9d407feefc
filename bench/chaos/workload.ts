/**
 * The chaos workload's everyday flows, over both API copies: escrows from signed partner
 * links, sandbox payments whose callbacks arrive duplicated, reordered (a failed report
 * first) and late (an expired report after paid), the checkout's status polling, then
 * send -> confirm-received -> release, or a dispute and a staff ruling, or a read;
 * payment-service orders paid and then delivered or refunded by staff; and withdrawals of
 * half of each balance with staff approvals and rejections.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, dataOf, pick, sandboxCallback, signers, type Actor } from './client.js';

export const AMOUNT_MIN = 60_000;

/** An escrow from the seller's signed link, created by the buyer; its id, or null when refused. */
export async function createEscrow(n: number, buyer: Actor, seller: Actor, amount: number): Promise<string | null> {
  const fields: Record<string, string> = {
    seller: seller.id,
    item: `Barang chaos ${n}`,
    category: pick(['goods', 'service', 'digital']),
    ref: `chaos-${n}-${randomBytes(4).toString('hex')}`,
    v: '1',
    expires: String(Math.floor(Date.now() / 1000) + 3600),
  };
  const created = await call('POST', '/api/escrows/from-link', { key: buyer.key, as: buyer.id, idem: true, body: { ...fields, sig: signers.fields(seller.secret!, fields), amount } });
  return created.status === 201 ? String(dataOf(created).id) : null;
}

export async function deal(n: number, users: Actor[], admin: Actor): Promise<void> {
  const seller = users[n % users.length]!;
  let buyer = pick(users);
  if (buyer.id === seller.id) buyer = users[(n + 1) % users.length]!;
  const amount = AMOUNT_MIN + Math.floor(Math.random() * 40) * 5_000;
  const created = await createEscrow(n, buyer, seller, amount);
  if (created === null) return;
  const escrowId = created;
  const pay = await call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } });
  if (pay.status !== 201) return;
  const order = String(dataOf(pay).gateway_order_id);
  const total = Number(dataOf(pay).amount ?? dataOf(pay).total_amount ?? 0);
  // Callbacks: duplicated, sometimes a failed report first (reordered), sometimes expired after paid (late).
  const shape = n % 4;
  if (shape === 1) await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'failed', total));
  await call('POST', pick(['/api/webhooks/inbound', '/api/webhooks/ipn', '/api/webhooks/payment', '/api/webhooks/universal']), sandboxCallback(order, 'paid', total));
  await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', total));
  if (shape === 2) await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'expired', total));
  // Poll as the checkout does, until paid.
  for (let i = 0; i < 120; i += 1) {
    const st = await call('GET', `/api/escrows/${escrowId}/payment-status`, { key: buyer.key });
    if (st.status === 200 && dataOf(st).status === 'paid') break;
    await sleep(500);
  }
  const path = n % 10;
  if (path < 6) {
    await call('POST', `/api/escrows/${escrowId}/send`, { key: seller.key, idem: true, body: { courier: 'jne', tracking_number: `JNE${n}X` } });
    await call('POST', `/api/escrows/${escrowId}/confirm-received`, { key: buyer.key, idem: true, body: {} });
    await call('POST', `/api/escrows/${escrowId}/release`, { key: buyer.key, idem: true, body: {} });
  } else if (path < 9) {
    const d = await call('POST', `/v1/escrows/${escrowId}/dispute`, { key: buyer.key, body: { reason_category: 'item_not_received', description: 'Barang belum sampai' } });
    let disputeId = d.status === 201 ? String(dataOf(d).id) : null;
    if (d.status === 409) {
      // A cut first try may have opened it: find it.
      const list = await call('GET', '/v1/disputes', { key: buyer.key, as: buyer.id });
      const found = ((list.body.data ?? []) as { id: string; escrow_id: string }[]).find((x) => x.escrow_id === escrowId);
      disputeId = found?.id ?? null;
    }
    if (disputeId) {
      await call('POST', `/v1/admin/disputes/${disputeId}/resolve`, { key: admin.key, idem: true, body: { outcome: n % 2 === 0 ? 'release' : 'refund', note: 'chaos ruling' } });
      // The ruling's answer has no fee: read the escrow (the released amount's fee).
      await call('GET', `/api/escrows/${escrowId}`, { key: buyer.key, as: buyer.id });
    }
  } else {
    await call('GET', `/api/escrows/${escrowId}`, { key: seller.key });
  }
}

/** A payment-service order paid through the sandbox gateway, then delivered or refunded by staff. */
export async function serviceOrder(n: number, users: Actor[], admin: Actor): Promise<void> {
  const buyer = users[(n * 7) % users.length]!;
  const created = await call('POST', '/api/jasabayar', {
    key: buyer.key,
    as: buyer.id,
    idem: true,
    body: { target_url: `https://toko.example/item/${n}`, target_label: `Pesanan chaos ${n}`, item_price: 50_000 + (n % 20) * 5_000 },
  });
  if (created.status !== 201) return;
  const orderId = String(dataOf(created).id);
  const pay = await call('POST', `/api/jasabayar/${orderId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } });
  if (pay.status !== 201) return;
  const order = String(dataOf(pay).gateway_order_id);
  const total = Number(dataOf(pay).amount);
  await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', total));
  await call('POST', '/api/webhooks/ipn', sandboxCallback(order, 'paid', total));
  for (let i = 0; i < 120; i += 1) {
    const st = await call('GET', `/api/jasabayar/${orderId}/payment-status`, { key: buyer.key, as: buyer.id });
    if (st.status === 200 && dataOf(st).status === 'paid') break;
    await sleep(500);
  }
  await call('POST', `/v1/admin/jasabayar/${orderId}/process`, { key: admin.key, idem: true, body: {} });
  if (n % 3 === 0) {
    await call('POST', `/v1/admin/jasabayar/${orderId}/refund`, { key: admin.key, idem: true, body: { reason: 'chaos refund' } });
  } else {
    await call('POST', `/v1/admin/jasabayar/${orderId}/deliver`, { key: admin.key, idem: true, body: { credentials: `user${n}:secret${n}`, delivery_note: 'done' } });
  }
}

export async function withdrawals(users: Actor[], admin: Actor, onApproved: (id: string) => void): Promise<void> {
  for (const [i, u] of users.entries()) {
    const bal = await call('GET', '/v1/user/balance', { key: u.key });
    const balance = Number(dataOf(bal).balance ?? 0);
    if (bal.status !== 200 || balance < 60_000) continue;
    const amount = Math.floor(balance / 2 / 10_000) * 10_000;
    if (amount < 50_000) continue;
    const w = await call('POST', '/v1/withdrawals', {
      key: u.key,
      as: u.id,
      idem: true,
      body: { amount, method: 'bank_transfer', destination_details: { bank_name: 'BCA', account_number: `88${String(i).padStart(8, '0')}`, account_holder: `Chaos ${i}` }, destination_ack: true },
    });
    if (w.status !== 201) continue;
    const id = String(dataOf(w).id);
    const decide = () => call('POST', `/v1/admin/withdrawals/${id}/${i % 3 === 0 ? 'reject' : 'approve'}`, { key: admin.key, idem: true, body: { note: 'chaos review' } });
    let decided = await decide();
    // The staff key shares the per-user limit with every staff move of the run (on a fast
    // machine they pass 300 a minute before the withdrawals come): a 429 is waited out as an
    // operator's client would (Retry-After), else no withdrawal is approved and the payout
    // fault (faults.ts stallJob) never happens.
    for (let tries = 0; decided.status === 429 && tries < 30; tries += 1) {
      await sleep(1000 * Math.max(1, Number(decided.headers.get('retry-after') ?? 1)));
      decided = await decide();
    }
    if (i % 3 !== 0 && decided.status >= 200 && decided.status < 300) onApproved(id);
  }
}

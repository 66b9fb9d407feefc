/**
 * A partner-link escrow in the sandbox, from link to release (issue 45):
 *
 *   seller signs up, gets a link-signing secret -> the partner signs a link (decision D3)
 *   -> buyer signs up and opens an escrow from it -> pays by QRIS on the sandbox gateway
 *   -> the sandbox reports the payment (decision D4) -> buyer polls until paid
 *   -> seller ships -> buyer confirms receipt and releases -> the seller's balance.
 *
 * Needs the API and the worker running at API_URL (default http://localhost:3000):
 *   node --import tsx examples/partner-link-escrow.ts
 */
import { createHmac } from 'node:crypto';
import { API_URL, expectEqual, idempotencyKey, must, register, run, say, sleep, tag } from './lib.js';

/** Decision D3, version 1: the canonical string of the signed fields that are present. */
function canonicalString(fields: Record<string, string>): string {
  const signed = ['buyer', 'category', 'desc', 'expires', 'item', 'ref', 'seller', 'v'];
  return signed
    .filter((name) => fields[name] !== undefined)
    .sort()
    .map((name) => `${name}=${encodeURIComponent(fields[name]!)}`)
    .join('&');
}

/**
 * The link must point at one of the service's PUBLIC_LINK_HOSTS (422 HOST_NOT_ALLOWED otherwise).
 * By default that is the host of PUBLIC_BASE_URL, which defaults to http://localhost:<PORT>
 * (shared/config.ts); set PUBLIC_BASE_URL here as the server has it when it differs.
 */
const PAY_BASE = process.env.PUBLIC_BASE_URL ?? `http://localhost:${new URL(API_URL).port || '80'}`;

run(async () => {
  // 1. The seller signs up (the answer signs them in: session cookie + csrf_token).
  const seller = await register('Toko Kamera');
  say(`seller     ${seller.user.email} (${seller.user.id})`);

  // 2. The seller gets a link-signing secret (shown once; the partner keeps it server-side).
  const { link_secret: secret } = must('rotate link secret', await seller.api.POST('/v1/partner/link-secret/rotate', { body: {} }));

  // 3. The partner builds a signed link: the fields, then sig = hex HMAC-SHA256 of the canonical string.
  const fields: Record<string, string> = {
    seller: seller.user.id,
    item: 'Kamera mirrorless bekas',
    category: 'goods',
    desc: 'Mulus, lengkap dengan charger',
    ref: `order-${tag()}`,
    v: '1',
    expires: String(Math.floor(Date.now() / 1000) + 3600),
  };
  const sig = createHmac('sha256', secret).update(canonicalString(fields), 'utf8').digest('hex');
  const link = `${PAY_BASE}/pay?${new URLSearchParams({ ...fields, sig }).toString()}`;
  say(`link       ${link}`);

  // 4. The buyer signs up and opens the escrow from the link (the amount comes from the body).
  const buyer = await register('Budi Pembeli');
  say(`buyer      ${buyer.user.email} (${buyer.user.id})`);
  const escrow = must(
    'create escrow from link',
    await buyer.api.POST('/api/escrows/from-link', {
      params: { header: { 'Idempotency-Key': idempotencyKey() } },
      body: { link, amount: 250_000 },
    }),
  );
  expectEqual('new escrow status', escrow.status, 'pending_payment');
  say(`escrow     ${escrow.id} ${escrow.status}, Rp${escrow.amount}, checkout ${escrow.escrow_url}`);

  // 5. The buyer pays by QRIS on the sandbox gateway: a payment link for the amount plus the surcharge.
  const payment = must(
    'pay',
    await buyer.api.POST('/api/escrows/{id}/pay', {
      params: { path: { id: escrow.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { method: 'qris', provider: 'sandbox' },
    }),
  );
  say(`payment    ${payment.gateway_order_id} via ${payment.provider}: Rp${payment.amount} (surcharge Rp${payment.surcharge})`);

  // 6. The sandbox gateway is told the payment succeeded; it sends its signed callback (decision D4).
  must(
    'simulate paid',
    await buyer.api.POST('/api/sandbox/payments/{gateway_order_id}/simulate', {
      params: { path: { gateway_order_id: payment.gateway_order_id } },
      body: { status: 'paid' },
    }),
  );

  // 7. The worker reconciles the callback; the buyer polls payment-status (at most once a second, up to 2 minutes).
  let status = 'pending';
  for (let i = 0; i < 120 && status !== 'paid'; i += 1) {
    await sleep(1000);
    const record = must('payment status', await buyer.api.GET('/api/escrows/{id}/payment-status', { params: { path: { id: escrow.id } } }));
    status = record.status;
    if (status === 'failed' || status === 'expired') break;
  }
  expectEqual('payment status', status, 'paid');
  say(`payment    paid`);

  // 8. The seller ships, with a courier and tracking number (both or neither).
  const sent = must(
    'send',
    await seller.api.POST('/api/escrows/{id}/send', {
      params: { path: { id: escrow.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { courier: 'jne', tracking_number: 'JNE0012345678' },
    }),
  );
  expectEqual('after send', sent.status, 'sent');
  say(`escrow     sent, auto-release at ${sent.auto_release_at}`);

  // 9. The buyer confirms receipt ...
  const received = must(
    'confirm received',
    await buyer.api.POST('/api/escrows/{id}/confirm-received', {
      params: { path: { id: escrow.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: {},
    }),
  );
  expectEqual('after confirm-received', received.status, 'received');

  // 10. ... and releases the money: the seller gets the amount minus the escrow fee.
  const released = must(
    'release',
    await buyer.api.POST('/api/escrows/{id}/release', {
      params: { path: { id: escrow.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: {},
    }),
  );
  expectEqual('after release', released.status, 'released');
  say(`escrow     released: fee Rp${released.platform_fee}, to the seller Rp${released.seller_amount}`);

  // 11. The seller's balance holds the released amount.
  const balance = must('balance', await seller.api.GET('/v1/user/balance'));
  expectEqual('seller balance', balance.balance, released.seller_amount);
  say(`balance    seller Rp${balance.balance}`);
});

/**
 * Paying an escrow (consumer spec 2 "Payment initiation", "Payment record", "Gateway method
 * entry"; 4.2 pay, payment-status, available-methods; issue 8): every error of pay with its
 * status, provider auto-selection, the surcharge in whole rupiah, link lifetimes,
 * idempotency, the payment-status record and the public list of methods. The sandbox
 * gateway is the only adapter used here; manual gateways need none.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import pg from 'pg';
import type { Response } from 'supertest';
import { createApp } from '../../../api/app.js';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, unfailedPayments } from '../../factories/payments.js';
import { createUser, signIn } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { commitTransaction, db, foldedTransaction } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { GatewayError } from '../../../shared/payments/gateways/index.js';
import { sandboxAdapter } from '../../../shared/payments/gateways/sandbox.js';
import { recordChargeAtCommit, type PaymentRow } from '../../../shared/payments/repo.js';
import { serializeInitiation } from '../../../shared/payments/serialize.js';
import { prepareEscrowLink } from '../../../shared/payments/service.js';

type Client = ReturnType<typeof api>;

const MINUTE = 60_000;
const T0 = new Date('2026-12-02T04:00:00.000Z');
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** The spec's Payment initiation fields (section 2), with their JSON types. */
const INITIATION_FIELDS: Record<string, 'string' | 'nullable-string' | 'integer'> = {
  payment_link_id: 'string',
  gateway_order_id: 'string',
  method: 'string',
  provider: 'string',
  payment_url: 'nullable-string',
  qr_code_url: 'nullable-string',
  va_number: 'nullable-string',
  va_bank: 'nullable-string',
  deep_link_url: 'nullable-string',
  expires_at: 'nullable-string',
  amount: 'integer',
  escrow_amount: 'integer',
  surcharge: 'integer',
};

/** The spec's Payment record fields (section 2). */
const RECORD_FIELDS = [
  'id',
  'escrow_id',
  'provider',
  'method',
  'gateway_order_id',
  'amount',
  'status',
  'qr_url',
  'va_number',
  'redirect_url',
  'raw_response',
  'expires_at',
  'created_at',
  'updated_at',
] as const;

function expectInitiationShape(data: Record<string, unknown>): void {
  for (const [field, type] of Object.entries(INITIATION_FIELDS)) {
    expect(data, field).to.have.property(field);
    const v = data[field];
    if (type === 'string') expect(v, field).to.be.a('string').and.not.equal('');
    else if (type === 'integer') expect(Number.isSafeInteger(v), `${field} is an integer: ${String(v)}`).to.equal(true);
    else if (v !== null) expect(v, field).to.be.a('string');
  }
}

async function payments(escrowId: string): Promise<PaymentRow[]> {
  return (await db('payments').where({ escrow_id: escrowId }).orderBy('created_at')) as PaymentRow[];
}

async function escrowStatus(id: string): Promise<string> {
  return ((await db('escrows').select('status').where({ id }).first()) as { status: string }).status;
}

function pay(client: Client, key: string, escrowId: string, body: Record<string, unknown>, idempotencyKey?: string) {
  const req = client.post(`/api/escrows/${escrowId}/pay`).set(bearer(key));
  if (idempotencyKey) void req.set('Idempotency-Key', idempotencyKey);
  return req.send(body);
}

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
  expect(res.body).to.not.have.property('data');
}

describe('POST /api/escrows/:id/pay', () => {
  let client: Client;
  beforeEach(() => {
    client = api();
    clock.set(T0);
  });

  describe('errors, each with its exact status, and nothing stored', () => {
    it('400 MISSING_METHOD: method absent or empty (checked before anything else)', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      for (const body of [{}, { method: '' }, { provider: 'sandbox' }, { method: '', provider: 'sandbox' }]) {
        expectError(await pay(client, key, escrow.id, body), 400, 'MISSING_METHOD');
      }
      // Before the escrow is even looked up.
      expectError(await pay(client, key, randomUUID(), {}), 400, 'MISSING_METHOD');
      expect(await countRows('payments')).to.equal(0);
    });

    it('400 UNSUPPORTED_METHOD: a method outside the five, a method no gateway has, a named provider that cannot take it', async () => {
      await createGateway({ provider: 'sandbox', methods: ['qris', 'bank_transfer'] });
      await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0' });
      await createGateway({ provider: 'sandbox_off', enabled: false, methods: ['gopay'] });
      await createGateway({ provider: 'manual_maint', isManual: true, inMaintenance: true, methods: ['shopeepay'] });
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      for (const method of ['ovo', 'QRIS', 'credit_card', 'qris ', 'balance']) {
        expectError(await pay(client, key, escrow.id, { method }), 400, 'UNSUPPORTED_METHOD');
      }
      // Known methods that no available gateway supports (crypto: nobody; gopay: a disabled one; shopeepay: in maintenance).
      for (const method of ['crypto', 'gopay', 'shopeepay']) {
        expectError(await pay(client, key, escrow.id, { method }), 400, 'UNSUPPORTED_METHOD');
      }
      // A named provider that does not support the method, is unknown, disabled or in maintenance.
      for (const [method, provider] of [
        ['qris', 'manual_bca'],
        ['qris', 'midtrans_nowhere'],
        ['gopay', 'sandbox_off'],
        ['shopeepay', 'manual_maint'],
      ] as const) {
        expectError(await pay(client, key, escrow.id, { method, provider }), 400, 'UNSUPPORTED_METHOD');
      }
      expect(await countRows('payments')).to.equal(0);
      expect(await countRows('sandbox_charges')).to.equal(0);
    });

    it('the client cannot set the amount, the surcharge or the buyer: unknown body fields are refused 400', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      for (const extra of [{ amount: 1 }, { surcharge: 0 }, { buyer_id: buyer.id }, { expires_at: '2030-01-01T00:00:00Z' }]) {
        const res = await pay(client, key, escrow.id, { method: 'qris', ...extra });
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.success).to.equal(false);
      }
      expect(await countRows('payments')).to.equal(0);
    });

    it('401 UNAUTHORIZED without credentials', async () => {
      await createGateway();
      const { escrow } = await createEscrow();
      const res = await client.post(`/api/escrows/${escrow.id}/pay`).send({ method: 'qris' });
      expectError(res, 401, 'UNAUTHORIZED');
      expect(await countRows('payments')).to.equal(0);
    });

    it('404 ESCROW_NOT_FOUND for an unknown or malformed id', async () => {
      await createGateway();
      const { user } = await createUser();
      const key = await issueKey(user.id);
      for (const id of [randomUUID(), 'not-a-uuid', '123']) {
        expectError(await pay(client, key, id, { method: 'qris' }), 404, 'ESCROW_NOT_FOUND');
      }
    });

    it('403 NOT_BUYER for the seller and for a stranger', async () => {
      await createGateway();
      const { escrow, seller } = await createEscrow();
      const { user: stranger } = await createUser();
      for (const user of [seller, stranger]) {
        expectError(await pay(client, await issueKey(user.id), escrow.id, { method: 'qris' }), 403, 'NOT_BUYER');
      }
      expect(await countRows('payments')).to.equal(0);
      expect(await countRows('sandbox_charges')).to.equal(0);
    });

    for (const status of ['paid', 'sent', 'released', 'cancelled', 'disputed', 'refunded'] as const) {
      it(`409 INVALID_STATE on a ${status} escrow (error.status names it)`, async () => {
        await createGateway();
        const { escrow, buyer } = await createEscrow({ status });
        const res = await pay(client, await issueKey(buyer.id), escrow.id, { method: 'qris' });
        expectError(res, 409, 'INVALID_STATE');
        expect(res.body.error.status).to.equal(status);
        expect(await countRows('payments')).to.equal(0);
        expect(await checkLedger(db)).to.deep.equal([]);
      });
    }

    it('409 INVALID_STATE once the escrow is past its payment deadline, even before the expiry timer ran', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      // The deadline passed; the timer job has not run yet (the preview already calls it expired).
      clock.set(new Date(escrow.expires_at.getTime() + 1000));
      expect((await client.get(`/api/escrows/${escrow.id}/preview`)).status).to.equal(410);
      const res = await pay(client, key, escrow.id, { method: 'qris' });
      expectError(res, 409, 'INVALID_STATE');
      expect(await countRows('payments')).to.equal(0);
      expect(await countRows('sandbox_charges')).to.equal(0);
      // So nothing postpones the expiry: the timer cancels the escrow.
      const ran = await runJobs();
      expect(ran.filter((j) => j.name === 'escrows.expire').map((j) => j.result)).to.deep.equal([{ expired: true }]);
      expect(await escrowStatus(escrow.id)).to.equal('cancelled');
    });

    it('503 NO_GATEWAYS when no gateway is enabled at all (none, disabled, in maintenance)', async () => {
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      expectError(await pay(client, key, escrow.id, { method: 'qris' }), 503, 'NO_GATEWAYS');
      await createGateway({ provider: 'sandbox', enabled: false });
      await createGateway({ provider: 'manual_bca', isManual: true, inMaintenance: true });
      expectError(await pay(client, key, escrow.id, { method: 'qris' }), 503, 'NO_GATEWAYS');
      expectError(await pay(client, key, escrow.id, { method: 'qris', provider: 'sandbox' }), 503, 'NO_GATEWAYS');
      expect(await countRows('payments')).to.equal(0);
    });

    it('503 ADAPTER_NOT_LOADED when only gateways without a loaded adapter can take the method', async () => {
      // A provider this server has no adapter for at all, and the sandbox outside sandbox mode.
      await createGateway({ provider: 'doku', methods: ['qris'], feePercent: '0' });
      await createGateway({ provider: 'sandbox', methods: ['qris', 'bank_transfer'] });
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      expectError(await pay(client, key, escrow.id, { method: 'qris', provider: 'doku' }), 503, 'ADAPTER_NOT_LOADED');
      const saved = config.sandboxMode;
      config.sandboxMode = false;
      try {
        expectError(await pay(client, key, escrow.id, { method: 'qris' }), 503, 'ADAPTER_NOT_LOADED');
        expectError(await pay(client, key, escrow.id, { method: 'bank_transfer', provider: 'sandbox' }), 503, 'ADAPTER_NOT_LOADED');
      } finally {
        config.sandboxMode = saved;
      }
      expect(await countRows('payments')).to.equal(0);
      // With the sandbox loaded again, the unloaded cheaper gateway is passed over.
      const ok = await pay(client, key, escrow.id, { method: 'qris' });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.body.data.provider).to.equal('sandbox');
    });

    it('502 GATEWAY_ERROR when the gateway refuses the charge: the reserved row failed, no live link, the idempotency key released', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      const original = sandboxAdapter.createCharge.bind(sandboxAdapter);
      sandboxAdapter.createCharge = () => Promise.reject(new GatewayError('upstream said 500'));
      const idem = randomUUID();
      try {
        expectError(await pay(client, key, escrow.id, { method: 'qris' }, idem), 502, 'GATEWAY_ERROR');
        expectError(await pay(client, key, escrow.id, { method: 'bank_transfer' }), 502, 'GATEWAY_ERROR');
      } finally {
        sandboxAdapter.createCharge = original;
      }
      expect(await unfailedPayments()).to.equal(0);
      expect(await escrowStatus(escrow.id)).to.equal('pending_payment');
      // The failed answer was not cached: the same key now makes the link.
      const retry = await pay(client, key, escrow.id, { method: 'qris' }, idem);
      expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
      expect(retry.headers['idempotent-replay']).to.equal(undefined);
      expect(await unfailedPayments()).to.equal(1);
    });
  });

  describe('provider auto-selection', () => {
    it('the cheapest surcharge wins; maintenance, disabled and unloaded gateways are skipped', async () => {
      await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
      await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer', 'qris'], feePercent: '0.5', sortOrder: 5 });
      await createGateway({ provider: 'manual_free_off', isManual: true, enabled: false, methods: ['qris', 'bank_transfer'], feePercent: '0', sortOrder: 0 });
      await createGateway({ provider: 'manual_free_maint', isManual: true, inMaintenance: true, methods: ['qris', 'bank_transfer'], feePercent: '0', sortOrder: 0 });
      await createGateway({ provider: 'doku', methods: ['qris', 'bank_transfer', 'gopay'], feePercent: '0', sortOrder: 0 });
      const { escrow, buyer } = await createEscrow({ amount: 150_000 });
      const key = await issueKey(buyer.id);
      const qris = await pay(client, key, escrow.id, { method: 'qris' });
      expect(qris.status, JSON.stringify(qris.body)).to.equal(201);
      expect(qris.body.data).to.deep.include({ provider: 'manual_bca', surcharge: 750, amount: 150_750 });
      // gopay: only the sandbox can take it (doku has no adapter here).
      const gopay = await pay(client, key, escrow.id, { method: 'gopay' });
      expect(gopay.body.data).to.deep.include({ provider: 'sandbox', surcharge: 1050, amount: 151_050 });
    });

    it('the percent and the fixed fee both count: a lower percent with a high fixed fee loses', async () => {
      await createGateway({ provider: 'sandbox', feePercent: '1', feeFixed: 0, sortOrder: 9 });
      await createGateway({ provider: 'manual_a', isManual: true, feePercent: '0.1', feeFixed: 4000, sortOrder: 0 });
      const { escrow, buyer } = await createEscrow({ amount: 150_000 });
      const key = await issueKey(buyer.id);
      // sandbox: 1,500; manual_a: 150 + 4,000.
      const small = await pay(client, key, escrow.id, { method: 'qris' });
      expect(small.body.data).to.deep.include({ provider: 'sandbox', surcharge: 1500 });
      // At 1,000,000: sandbox 10,000; manual_a 1,000 + 4,000 = 5,000.
      const big = await createEscrow({ amount: 1_000_000, buyer });
      const large = await pay(client, key, big.escrow.id, { method: 'qris' });
      expect(large.body.data).to.deep.include({ provider: 'manual_a', surcharge: 5000, amount: 1_005_000 });
    });

    it('a tie on the surcharge goes to the lower sort_order, then to the provider name', async () => {
      await createGateway({ provider: 'manual_c', isManual: true, feePercent: '0.5', sortOrder: 2 });
      await createGateway({ provider: 'manual_b', isManual: true, feePercent: '0.5', sortOrder: 1 });
      await createGateway({ provider: 'sandbox', feePercent: '0.5', sortOrder: 3 });
      const { escrow, buyer } = await createEscrow({ amount: 150_000 });
      const key = await issueKey(buyer.id);
      const first = await pay(client, key, escrow.id, { method: 'qris' });
      expect(first.body.data).to.deep.include({ provider: 'manual_b', surcharge: 750 });
      await db('payment_gateways').where({ provider: 'manual_b' }).update({ sort_order: 2 });
      const second = await pay(client, key, escrow.id, { method: 'qris' });
      // manual_b and manual_c now tie on surcharge and sort_order: by name.
      expect(second.body.data.provider).to.equal('manual_b');
      await db('payment_gateways').where({ provider: 'sandbox' }).update({ sort_order: 0 });
      const third = await pay(client, key, escrow.id, { method: 'qris' });
      expect(third.body.data.provider).to.equal('sandbox');
      // One rupiah cheaper beats any sort_order: 0.499% of 150,000 = 748.5 -> 749.
      await db('payment_gateways').where({ provider: 'manual_c' }).update({ fee_percent: '0.499', sort_order: 9 });
      const fourth = await pay(client, key, escrow.id, { method: 'qris' });
      expect(fourth.body.data).to.deep.include({ provider: 'manual_c', surcharge: 749 });
      // Equal after rounding is a tie: at 10,001, 0.5% (50.005) and 0.505% (50.505) both round up to 51.
      const small = await createEscrow({ amount: 10_001, buyer });
      await db('payment_gateways').where({ provider: 'manual_c' }).update({ fee_percent: '0.505', sort_order: -1 });
      const fifth = await pay(client, key, small.escrow.id, { method: 'qris' });
      expect(fifth.body.data).to.deep.include({ provider: 'manual_c', surcharge: 51 });
    });

    it('a named provider is used even when another is cheaper', async () => {
      await createGateway({ provider: 'sandbox', feePercent: '2', sortOrder: 5 });
      await createGateway({ provider: 'manual_bca', isManual: true, feePercent: '0', sortOrder: 0 });
      const { escrow, buyer } = await createEscrow({ amount: 150_000 });
      const key = await issueKey(buyer.id);
      const named = await pay(client, key, escrow.id, { method: 'bank_transfer', provider: 'sandbox' });
      expect(named.status, JSON.stringify(named.body)).to.equal(201);
      expect(named.body.data).to.deep.include({ provider: 'sandbox', surcharge: 3000, amount: 153_000 });
      const auto = await pay(client, key, escrow.id, { method: 'bank_transfer' });
      expect(auto.body.data).to.deep.include({ provider: 'manual_bca', surcharge: 0, amount: 150_000 });
    });
  });

  describe('surcharge arithmetic (whole rupiah, rounded up)', () => {
    const cases: { name: string; amount: number; percent: string; fixed: number; surcharge: number }[] = [
      { name: '0.7% of 150,000 = 1,050', amount: 150_000, percent: '0.7', fixed: 0, surcharge: 1050 },
      { name: '0.5% of 10,001 = 50.005, rounded up to 51', amount: 10_001, percent: '0.5', fixed: 0, surcharge: 51 },
      { name: '0.5% of 10,000 = 50 exactly', amount: 10_000, percent: '0.5', fixed: 0, surcharge: 50 },
      { name: 'fee_fixed added: 0.7% of 150,000 + 4,000 = 5,050', amount: 150_000, percent: '0.7', fixed: 4000, surcharge: 5050 },
      { name: '0% = 0', amount: 150_000, percent: '0', fixed: 0, surcharge: 0 },
      { name: '0% + 2,500 fixed = 2,500', amount: 150_000, percent: '0', fixed: 2500, surcharge: 2500 },
      { name: '1.999% of 123,457 = 2,467.90 -> 2,468', amount: 123_457, percent: '1.999', fixed: 0, surcharge: 2468 },
      { name: '0.7% of 500,000,000 = 3,500,000', amount: 500_000_000, percent: '0.7', fixed: 0, surcharge: 3_500_000 },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        await createGateway({ provider: 'sandbox', feePercent: c.percent, feeFixed: c.fixed });
        const { escrow, buyer } = await createEscrow({ amount: c.amount });
        const res = await pay(client, await issueKey(buyer.id), escrow.id, { method: 'qris' });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.data).to.deep.include({ escrow_amount: c.amount, surcharge: c.surcharge, amount: c.amount + c.surcharge });
        const [row] = await payments(escrow.id);
        expect(row).to.deep.include({ escrow_amount: c.amount, surcharge: c.surcharge, amount: c.amount + c.surcharge });
        // The sandbox gateway was asked for the total.
        const charge = (await db('sandbox_charges').where({ gateway_order_id: res.body.data.gateway_order_id }).first()) as { amount: number; method: string; status: string };
        expect(charge).to.deep.include({ amount: c.amount + c.surcharge, method: 'qris', status: 'pending' });
      });
    }
  });

  describe('the answer and the link lifetime', () => {
    const lifetimes: { method: string; minutes: number; fields: Record<string, 'set' | null> }[] = [
      { method: 'qris', minutes: 15, fields: { payment_url: null, va_number: null, va_bank: null, deep_link_url: null } },
      // The sandbox has no hosted page or app to open (it completes through simulate): no links.
      { method: 'gopay', minutes: 15, fields: { payment_url: null, va_number: null, va_bank: null, deep_link_url: null } },
      { method: 'shopeepay', minutes: 15, fields: { payment_url: null, va_number: null, va_bank: null, deep_link_url: null } },
      { method: 'crypto', minutes: 60, fields: { payment_url: null, va_number: null, va_bank: null, deep_link_url: null } },
      { method: 'bank_transfer', minutes: 24 * 60, fields: { payment_url: null, va_number: 'set', va_bank: 'set', deep_link_url: null } },
    ];
    for (const l of lifetimes) {
      it(`${l.method}: the spec's Payment initiation, expiring ${l.minutes} minutes from now`, async () => {
        await createGateway({ provider: 'sandbox', feePercent: '0.7' });
        const { escrow, buyer } = await createEscrow({ amount: 150_000 });
        const res = await pay(client, await issueKey(buyer.id), escrow.id, { method: l.method });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.success).to.equal(true);
        const data = res.body.data as Record<string, unknown>;
        expectInitiationShape(data);
        const [row] = await payments(escrow.id);
        expect(data).to.deep.include({
          payment_link_id: row!.id,
          gateway_order_id: row!.gateway_order_id,
          method: l.method,
          provider: 'sandbox',
          qr_code_url: null,
          amount: 151_050,
          escrow_amount: 150_000,
          surcharge: 1050,
          expires_at: new Date(T0.getTime() + l.minutes * MINUTE).toISOString(),
        });
        for (const [field, want] of Object.entries(l.fields)) {
          if (want === null) expect(data[field], field).to.equal(null);
          else expect(data[field], field).to.be.a('string').and.not.equal('');
        }
        expect(row).to.deep.include({ status: 'pending', is_manual: false, buyer_id: buyer.id, flag: null, paid_at: null });
        expect(row!.expires_at!.toISOString()).to.equal(new Date(T0.getTime() + l.minutes * MINUTE).toISOString());
        // The poller asks about it two minutes after it was made.
        expect(row!.next_poll_at!.toISOString()).to.equal(new Date(T0.getTime() + 2 * MINUTE).toISOString());
        // Paying moved no money.
        expect(await escrowStatus(escrow.id)).to.equal('pending_payment');
        expect(await countRows('journal_entries')).to.equal(0);
      });
    }

    it('the answer is the link as stored (its row and its gateway answer are written with the COMMITs, not read back): gateway and manual, keyed and not', async () => {
      await createGateway({ provider: 'sandbox', feePercent: '0.7' });
      await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: 4000, config: { bank: 'BCA' } });
      const cases = [
        { body: { method: 'qris' }, keyed: true },
        { body: { method: 'bank_transfer', provider: 'sandbox' }, keyed: false },
        { body: { method: 'bank_transfer', provider: 'manual_bca' }, keyed: true },
        { body: { method: 'bank_transfer', provider: 'manual_bca' }, keyed: false },
      ];
      for (const c of cases) {
        const { escrow, buyer } = await createEscrow({ amount: 150_000 });
        const res = await pay(client, await issueKey(buyer.id), escrow.id, c.body, c.keyed ? randomUUID() : undefined);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        const [row] = await payments(escrow.id);
        expect(res.body.data, JSON.stringify(c)).to.deep.equal(JSON.parse(JSON.stringify(serializeInitiation(row!))));
        expect(row).to.deep.include({ status: 'pending', buyer_id: buyer.id, escrow_id: escrow.id, order_id: null });
        if (c.body.provider === 'manual_bca') expect(JSON.parse(row!.raw_response)).to.deep.equal({ manual: true, config: { bank: 'BCA' } });
        else expect(JSON.parse(row!.raw_response)).to.include({ sandbox: true, gateway_order_id: row!.gateway_order_id });
      }
    });

    it('text the gateway answers is stored and answered alike (a lone UTF-16 surrogate becomes U+FFFD in both)', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const original = sandboxAdapter.createCharge.bind(sandboxAdapter);
      sandboxAdapter.createCharge = async (req) => ({ ...(await original(req)), qrString: 'QR\ud800END' });
      try {
        const res = await pay(client, await issueKey(buyer.id), escrow.id, { method: 'qris' }, randomUUID());
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.data.qr_string).to.equal('QR\ufffdEND');
        expect((await payments(escrow.id))[0]!.qr_string).to.equal('QR\ufffdEND');
      } finally {
        sandboxAdapter.createCharge = original;
      }
    });

    it("a stranger's or the seller's pay never takes the escrow's lock: refused 403 while the buyer's transaction holds it", async () => {
      await createGateway();
      const { escrow, seller } = await createEscrow();
      const { user: stranger } = await createUser();
      const trx = await db.transaction();
      try {
        await trx('escrows').where({ id: escrow.id }).forUpdate().first();
        for (const user of [seller, stranger]) expectError(await pay(client, await issueKey(user.id), escrow.id, { method: 'qris' }, randomUUID()), 403, 'NOT_BUYER');
      } finally {
        await trx.rollback();
      }
      expect(await countRows('payments')).to.equal(0);
    });

    it("a link's row missing when its gateway answer is recorded fails the transaction (nothing written) rather than answering a link that is not stored", async () => {
      const patch = { qr_string: 'x', qr_url: null, va_number: null, va_bank: null, redirect_url: null, deep_link_url: null, raw_response: '{}', expires_at: T0, updated_at: T0 };
      // Held in a keyed request's folded transaction: its COMMIT fails.
      const { trx } = await foldedTransaction(db, { sql: 'SELECT 1', bindings: [] });
      await recordChargeAtCommit(trx, randomUUID(), patch);
      let failed: unknown;
      await commitTransaction(trx).catch((err: unknown) => (failed = err));
      expect((failed as { code?: string } | undefined)?.code).to.equal('22012');
      // In any other transaction it runs at once and fails there.
      let failedNow: unknown;
      await db.transaction((plain) => recordChargeAtCommit(plain, randomUUID(), patch)).catch((err: unknown) => (failedNow = err));
      expect((failedNow as { code?: string } | undefined)?.code).to.equal('22012');
    });

    it('the va_number of a bank transfer is the sandbox virtual account; the gateway order ids are unique', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      const ids = new Set<string>();
      for (let i = 0; i < 5; i += 1) {
        const res = await pay(client, key, escrow.id, { method: 'bank_transfer' });
        expect(res.status).to.equal(201);
        expect(res.body.data.va_number).to.match(/^8808[0-9]{12}$/);
        expect(res.body.data.va_bank).to.equal('SANDBOX');
        ids.add(res.body.data.gateway_order_id as string);
      }
      expect(ids.size).to.equal(5);
    });

    it('the buyer over a session cookie can pay too', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const agent = supertest.agent(createApp().callback());
      const csrf = await signIn(agent, buyer.email);
      const res = await agent.post(`/api/escrows/${escrow.id}/pay`).set('X-CSRF-Token', csrf).send({ method: 'qris' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const noCsrf = await agent.post(`/api/escrows/${escrow.id}/pay`).send({ method: 'qris' });
      expect(noCsrf.status).to.equal(403);
      expect(await countRows('payments')).to.equal(1);
    });
  });

  describe('idempotency', () => {
    it('more concurrent keyed pays than the pool has connections all succeed: the sandbox gateway does not wait for a second connection of the pool the request holds', async () => {
      await createGateway();
      const n = config.databasePoolMax + 5;
      const parties = await Promise.all(Array.from({ length: n }, async () => {
        const { escrow, buyer } = await createEscrow();
        return { escrowId: escrow.id, key: await issueKey(buyer.id) };
      }));
      // Each keyed request holds a connection for its transaction; before the fix the
      // sandbox charge waited for another one and the pays starved each other (500 after
      // the acquire timeout: npm run chaos found it).
      const answers = await Promise.all(parties.map((p) => pay(client, p.key, p.escrowId, { method: 'qris' }, randomUUID())));
      expect(answers.map((a) => a.status)).to.deep.equal(parties.map(() => 201));
      expect(await countRows('sandbox_charges')).to.equal(n);
    });

    /** A sandbox gateway, an escrow and its buyer's first keyed qris pay (201). */
    async function firstKeyedPay() {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      const idem = randomUUID();
      const first = await pay(client, key, escrow.id, { method: 'qris' }, idem);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      return { escrow, key, idem, first };
    }

    it('the same key replays the same link (one payment row); a fresh key makes a new link', async () => {
      const { escrow, key, idem, first } = await firstKeyedPay();
      expect(first.headers['idempotent-replay']).to.equal(undefined);
      clock.advance(30_000);
      const replay = await pay(client, key, escrow.id, { method: 'qris' }, idem);
      expect(replay.status).to.equal(201);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect(await countRows('payments')).to.equal(1);
      expect(await countRows('sandbox_charges')).to.equal(1);
      // The same key with another body is a conflict.
      const conflict = await pay(client, key, escrow.id, { method: 'bank_transfer' }, idem);
      expectError(conflict, 422, 'IDEMPOTENCY_KEY_CONFLICT');
      clock.advance(30_000);
      const fresh = await pay(client, key, escrow.id, { method: 'qris' }, randomUUID());
      expect(fresh.status).to.equal(201);
      expect(fresh.body.data.payment_link_id).to.not.equal(first.body.data.payment_link_id);
      expect(fresh.body.data.gateway_order_id).to.not.equal(first.body.data.gateway_order_id);
      expect(fresh.body.data.expires_at).to.equal(new Date(T0.getTime() + 60_000 + 15 * MINUTE).toISOString());
      expect(await countRows('payments')).to.equal(2);
      // payment-status shows the newest link.
      const status = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(key));
      expect(status.body.data.id).to.equal(fresh.body.data.payment_link_id);
      // Without a key every call is a new link.
      clock.advance(1000);
      const plain = await pay(client, key, escrow.id, { method: 'qris' });
      expect(plain.body.data.payment_link_id).to.not.be.oneOf([first.body.data.payment_link_id, fresh.body.data.payment_link_id]);
      expect(await countRows('payments')).to.equal(3);
    });

    it("a replay is answered before any check of the escrow (the key is looked at in the reserve's first round trip): the stored link even once the escrow moved on, and no new link", async () => {
      const { escrow, key, idem, first } = await firstKeyedPay();
      await db('escrows').where({ id: escrow.id }).update({ status: 'cancelled' });
      const replay = await pay(client, key, escrow.id, { method: 'qris' }, idem);
      expect(replay.status, JSON.stringify(replay.body)).to.equal(201);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expectError(await pay(client, key, escrow.id, { method: 'gopay' }, idem), 422, 'IDEMPOTENCY_KEY_CONFLICT');
      // A fresh key meets the check.
      expectError(await pay(client, key, escrow.id, { method: 'qris' }, randomUUID()), 409, 'INVALID_STATE');
      expect(await countRows('payments')).to.equal(1);
      expect(await countRows('sandbox_charges')).to.equal(1);
    });

    it('the same key with another body is 422 before the body is checked: no method, an empty one, an unknown one', async () => {
      const { escrow, key, idem } = await firstKeyedPay();
      for (const body of [{}, { method: '' }, { method: 'bitcoin' }]) expectError(await pay(client, key, escrow.id, body, idem), 422, 'IDEMPOTENCY_KEY_CONFLICT');
      // Without that key the body's own refusal comes first, before the escrow's.
      expectError(await pay(client, key, escrow.id, {}, randomUUID()), 400, 'MISSING_METHOD');
      expectError(await pay(client, key, 'not-a-uuid', { method: 'bitcoin' }, randomUUID()), 400, 'UNSUPPORTED_METHOD');
      expect(await countRows('payments')).to.equal(1);
    });

    it("the database failing on the reserve's first round trip (where the key is looked at) answers 500 IDEMPOTENCY_LOOKUP_FAILED, as the key's own lookup did", async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      // Only the reserve's keyed transaction finds the database gone (authentication still
      // works): pg.Pool's connect, which the keyed transactions' pipelined pool uses.
      // eslint-disable-next-line @typescript-eslint/unbound-method -- put back below; called with the pool as `this`
      const original = pg.Pool.prototype.connect;
      const connect = function (this: pg.Pool) {
        const stack = new Error().stack ?? '';
        if (stack.includes('prepareEscrowLinkAdmitting') && !stack.includes('createCharge')) return Promise.reject(new Error('connect ECONNREFUSED (simulated)'));
        return (original as (this: pg.Pool) => Promise<pg.PoolClient>).call(this);
      };
      pg.Pool.prototype.connect = connect as typeof original;
      let res: Response;
      try {
        res = await pay(client, key, escrow.id, { method: 'qris' }, randomUUID());
      } finally {
        pg.Pool.prototype.connect = original;
      }
      expectError(res, 500, 'IDEMPOTENCY_LOOKUP_FAILED');
      expect(await countRows('payments')).to.equal(0);
    });

    it('a refused pay is not cached: the same key works once the refusal is gone', async () => {
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      const idem = randomUUID();
      expectError(await pay(client, key, escrow.id, { method: 'qris' }, idem), 503, 'NO_GATEWAYS');
      await createGateway();
      const ok = await pay(client, key, escrow.id, { method: 'qris' }, idem);
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.headers['idempotent-replay']).to.equal(undefined);
    });

    it('the gateway is called with no transaction open (rule 7): its payment row is committed and the escrow row is free during the call', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const key = await issueKey(buyer.id);
      const seen: { committed: number; escrowFree: boolean }[] = [];
      const original = sandboxAdapter.createCharge.bind(sandboxAdapter);
      sandboxAdapter.createCharge = async (req) => {
        // Another connection sees the row (a callback that beats the answer finds its
        // payment) and can lock the escrow at once (nothing waits for the gateway).
        const committed = await countRows('payments');
        const escrowFree = await db.transaction(async (trx) => {
          await trx.raw('SET LOCAL lock_timeout = 200');
          return (await trx('escrows').where({ id: escrow.id }).forUpdate().first()) !== undefined;
        });
        seen.push({ committed, escrowFree });
        return original(req);
      };
      try {
        const res = await pay(client, key, escrow.id, { method: 'qris' }, randomUUID());
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.data.qr_code_url ?? res.body.data.va_number ?? res.body.data.payment_url ?? 'qr').to.be.a('string');
        expect(res.body.data.expires_at).to.equal(new Date(T0.getTime() + 15 * MINUTE).toISOString());
      } finally {
        sandboxAdapter.createCharge = original;
      }
      expect(seen).to.deep.equal([{ committed: 1, escrowFree: true }]);
    });

    it('a link whose answer was never recorded (the request died after the gateway call) stops blocking a cancel within a minute', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      const link = await prepareEscrowLink({ userId: buyer.id, role: 'user' }, escrow.id, { method: 'qris' });
      expect(link.charge).to.not.equal(undefined);
      const key = await issueKey(buyer.id);
      const cancel = () => client.post(`/api/escrows/${escrow.id}/cancel`).set(bearer(key)).send({});
      expectError(await cancel(), 409, 'PAYMENT_IN_PROGRESS');
      clock.advance(config.gateways.httpTimeoutMs + 30_001);
      const res = await cancel();
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await escrowStatus(escrow.id)).to.equal('cancelled');
    });

    for (const manual of [false, true]) {
      it(`a keyed pay refused after its ${manual ? 'manual transfer ' : ''}link was prepared (a concurrent twin took the key) leaves that link failed, never live`, async () => {
        if (manual) await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', config: { bank: 'BCA' } });
        else await createGateway();
        const { escrow, buyer } = await createEscrow();
        const key = await issueKey(buyer.id);
        const idem = randomUUID();
        const body = manual ? { method: 'bank_transfer', provider: 'manual_bca' } : { method: 'qris' };
        const answers = await Promise.all([1, 2, 3].map(() => pay(client, key, escrow.id, body, idem)));
        const statuses = answers.map((a) => a.status).sort();
        expect(statuses.filter((s) => s === 201).length, JSON.stringify(statuses)).to.be.at.least(1);
        const winner = answers.find((a) => a.status === 201 && a.headers['idempotent-replay'] === undefined)!;
        const rows = await payments(escrow.id);
        // Every link but the answered one is failed.
        expect(rows.filter((r) => r.status !== 'failed').map((r) => r.id)).to.deep.equal([winner.body.data.payment_link_id]);
      });
    }

    it('an Idempotency-Key that is not a UUID v4 is refused', async () => {
      await createGateway();
      const { escrow, buyer } = await createEscrow();
      expectError(await pay(client, await issueKey(buyer.id), escrow.id, { method: 'qris' }, 'not-a-uuid'), 400, 'IDEMPOTENCY_KEY_INVALID');
      expect(await countRows('payments')).to.equal(0);
    });
  });
});

describe('GET /api/escrows/:id/payment-status', () => {
  let client: Client;
  beforeEach(() => {
    client = api();
    clock.set(T0);
  });

  it("answers the spec's Payment record of the latest link (amount and raw_response as strings)", async () => {
    await createGateway({ provider: 'sandbox', feePercent: '0.7' });
    const { escrow, buyer, seller } = await createEscrow({ amount: 150_000 });
    const key = await issueKey(buyer.id);
    const paid = await pay(client, key, escrow.id, { method: 'bank_transfer' });
    expect(paid.status).to.equal(201);
    const res = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(key));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    const data = res.body.data as Record<string, unknown>;
    for (const field of RECORD_FIELDS) expect(data, field).to.have.property(field);
    const [row] = await payments(escrow.id);
    expect(data).to.deep.include({
      id: row!.id,
      escrow_id: escrow.id,
      provider: 'sandbox',
      method: 'bank_transfer',
      gateway_order_id: paid.body.data.gateway_order_id,
      amount: '151050',
      status: 'pending',
      qr_url: null,
      va_number: paid.body.data.va_number,
      redirect_url: null,
      expires_at: new Date(T0.getTime() + 24 * 60 * MINUTE).toISOString(),
      created_at: T0.toISOString(),
      updated_at: T0.toISOString(),
    });
    expect(data.raw_response).to.be.a('string');
    expect(JSON.parse(data.raw_response as string)).to.deep.equal({ sandbox: true, gateway_order_id: paid.body.data.gateway_order_id });
    // The seller and an admin read the same record.
    const bySeller = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(await issueKey(seller.id)));
    expect(bySeller.status).to.equal(200);
    expect(bySeller.body.data).to.deep.equal(res.body.data);
    const admin = (await createUser({ role: 'admin' })).user;
    const byAdmin = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(await issueKey(admin.id)));
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).to.equal(200);
    expect(byAdmin.body.data).to.deep.equal(res.body.data);
  });

  it('shows the link that paid the escrow, not a newer unpaid one', async () => {
    await createGateway();
    const { escrow, buyer } = await createEscrow();
    const key = await issueKey(buyer.id);
    const first = await pay(client, key, escrow.id, { method: 'qris' });
    clock.advance(MINUTE);
    const second = await pay(client, key, escrow.id, { method: 'bank_transfer' });
    expect(second.status).to.equal(201);
    await client.post(`/api/sandbox/payments/${first.body.data.gateway_order_id as string}/simulate`).set(bearer(key)).send({ status: 'paid' });
    await runJobs();
    const res = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(key));
    expect(res.body.data).to.deep.include({ id: first.body.data.payment_link_id, status: 'paid' });
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a QRIS link shows its status as it moves (pending, then expired)', async () => {
    await createGateway();
    const { escrow, buyer } = await createEscrow();
    const key = await issueKey(buyer.id);
    const paid = await pay(client, key, escrow.id, { method: 'qris' });
    await db('payments').where({ id: paid.body.data.payment_link_id }).update({ status: 'expired', next_poll_at: null });
    const res = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(key));
    expect(res.body.data).to.deep.include({ status: 'expired', method: 'qris', amount: '151050' });
  });

  it('404 NO_PAYMENT before any pay; 404 ESCROW_NOT_FOUND for unknown and malformed ids', async () => {
    const { escrow, buyer } = await createEscrow();
    const key = await issueKey(buyer.id);
    const none = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(key));
    expectError(none, 404, 'NO_PAYMENT');
    for (const id of [randomUUID(), 'nope']) {
      expectError(await client.get(`/api/escrows/${id}/payment-status`).set(bearer(key)), 404, 'ESCROW_NOT_FOUND');
    }
  });

  it('403 FORBIDDEN for a stranger (nothing about the payment leaks); 401 without credentials', async () => {
    await createGateway();
    const { escrow, buyer } = await createEscrow();
    const paid = await pay(client, await issueKey(buyer.id), escrow.id, { method: 'qris' });
    const { user: stranger } = await createUser();
    const strangerKey = await issueKey(stranger.id);
    const res = await client.get(`/api/escrows/${escrow.id}/payment-status`).set(bearer(strangerKey));
    expectError(res, 403, 'FORBIDDEN');
    expect(JSON.stringify(res.body)).to.not.include(paid.body.data.gateway_order_id);
    // Before any payment too: the stranger learns nothing about whether one exists.
    const other = await createEscrow();
    expectError(await client.get(`/api/escrows/${other.escrow.id}/payment-status`).set(bearer(strangerKey)), 403, 'FORBIDDEN');
    expectError(await client.get(`/api/escrows/${escrow.id}/payment-status`), 401, 'UNAUTHORIZED');
  });
});

describe('GET /api/gateways/available-methods', () => {
  let client: Client;
  beforeEach(() => {
    client = api();
  });

  it('no auth; enabled gateways only (not disabled, not in maintenance, adapter loaded or manual), in sort order', async () => {
    const manualConfig = {
      image_url: 'https://cdn.example.com/qris-static.png',
      bank_accounts: [{ bank: 'BCA', account_number: '1234567890', account_name: 'PT Rekber' }],
    };
    await createGateway({ provider: 'sandbox', displayName: 'Sandbox Pay', feePercent: '0.7', feeFixed: 0, sortOrder: 2 });
    await createGateway({ provider: 'manual_bca', displayName: 'Transfer BCA', isManual: true, methods: ['bank_transfer', 'qris'], feePercent: '0', feeFixed: 2500, sortOrder: 1, config: manualConfig });
    await createGateway({ provider: 'manual_off', isManual: true, enabled: false, sortOrder: 0 });
    await createGateway({ provider: 'sandbox_maint', inMaintenance: true, sortOrder: 0 });
    await createGateway({ provider: 'doku', sortOrder: 0 });
    const res = await client.get('/api/gateways/available-methods');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.headers['access-control-allow-origin']).to.equal('*');
    expect(res.body.data).to.deep.equal([
      {
        provider: 'manual_bca',
        display_name: 'Transfer BCA',
        supported_methods: ['bank_transfer', 'qris'],
        is_manual: true,
        config: manualConfig,
        fee_percent: 0,
        fee_fixed: 2500,
      },
      {
        provider: 'sandbox',
        display_name: 'Sandbox Pay',
        supported_methods: ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'],
        is_manual: false,
        config: null,
        fee_percent: 0.7,
        fee_fixed: 0,
      },
    ]);
    // Typed per spec: numbers, booleans, arrays.
    for (const entry of res.body.data as Record<string, unknown>[]) {
      expect(entry.fee_percent).to.be.a('number');
      expect(entry.fee_fixed).to.be.a('number');
      expect(entry.is_manual).to.be.a('boolean');
      expect(entry.supported_methods).to.be.an('array');
    }
  });

  it('0.5 means 0.5%; a gateway leaves the list in maintenance and comes back', async () => {
    await createGateway({ provider: 'sandbox', feePercent: '0.5', feeFixed: 1000 });
    const one = await client.get('/api/gateways/available-methods');
    expect(one.body.data).to.have.length(1);
    expect(one.body.data[0]).to.deep.include({ fee_percent: 0.5, fee_fixed: 1000 });
    await db('payment_gateways').where({ provider: 'sandbox' }).update({ in_maintenance: true });
    expect((await client.get('/api/gateways/available-methods')).body.data).to.deep.equal([]);
    await db('payment_gateways').where({ provider: 'sandbox' }).update({ in_maintenance: false, enabled: false });
    expect((await client.get('/api/gateways/available-methods')).body.data).to.deep.equal([]);
    await db('payment_gateways').where({ provider: 'sandbox' }).update({ enabled: true });
    expect((await client.get('/api/gateways/available-methods')).body.data).to.have.length(1);
  });

  it('outside sandbox mode the sandbox gateway is not offered (its adapter is not loaded)', async () => {
    await createGateway({ provider: 'sandbox' });
    await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'] });
    const saved = config.sandboxMode;
    config.sandboxMode = false;
    try {
      const res = await client.get('/api/gateways/available-methods');
      expect((res.body.data as { provider: string }[]).map((g) => g.provider)).to.deep.equal(['manual_bca']);
    } finally {
      config.sandboxMode = saved;
    }
  });

  it('an empty list when no gateway is configured', async () => {
    const res = await client.get('/api/gateways/available-methods');
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal([]);
  });
});

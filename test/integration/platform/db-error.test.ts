/**
 * `500 DB_ERROR` where the spec names it (consumer spec 4.4 POST /v1/withdrawals: "500
 * DB_ERROR (retry with the same key)"; 4.8 POST /api/jasabayar: "500 DB_ERROR (no funds
 * taken)"; issue 42). A real database failure is provoked: a trigger installed by the test
 * makes Postgres cancel the insert (SQLSTATE 57014, what a statement timeout or
 * pg_cancel_backend gives). The answer is 500 DB_ERROR, nothing is kept, the key is
 * released, and the retry with the same key goes through once.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { setOrderConfig } from '../../factories/orders.js';
import { createUser } from '../../factories/users.js';
import { freshBank, fundedUser, userBalance } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const FAIL_FN = 'test_issue42_cancel_insert';

/** Postgres refuses every insert into `table` as a cancelled statement until `heal` runs. */
async function breakInserts(table: string): Promise<void> {
  await db.raw(`CREATE OR REPLACE FUNCTION ${FAIL_FN}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'canceling statement due to statement timeout' USING ERRCODE = '57014'; END $$`);
  await db.raw(`CREATE TRIGGER ${FAIL_FN} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${FAIL_FN}()`);
}

async function heal(table: string): Promise<void> {
  await db.raw(`DROP TRIGGER IF EXISTS ${FAIL_FN} ON ${table}`);
}

describe('500 DB_ERROR where the spec names it (a real database failure)', () => {
  const client = api();
  const broken: string[] = [];

  beforeEach(() => clock.set(new Date('2026-12-01T03:00:00.000Z')));
  afterEach(async () => {
    for (const t of broken.splice(0)) await heal(t);
    await db.raw(`DROP FUNCTION IF EXISTS ${FAIL_FN}()`);
  });

  it('POST /v1/withdrawals: 500 DB_ERROR, nothing taken, the key released; the retry with the same key goes through once', async () => {
    const user = await fundedUser(500_000);
    const key = await issueKey(user.id);
    const body = { amount: 100_000, method: 'bank_transfer', destination_details: freshBank() };
    const idem = randomUUID();
    broken.push('withdrawals');
    await breakInserts('withdrawals');

    const failed = await client.post('/v1/withdrawals').set({ ...bearer(key), 'Idempotency-Key': idem }).send(body);
    expect(failed.status, JSON.stringify(failed.body)).to.equal(500);
    expect(failed.body.success).to.equal(false);
    expect(failed.body.error.code).to.equal('DB_ERROR');
    expect(failed.body.error.message).to.match(/retry with the same Idempotency-Key/);
    expect(JSON.stringify(failed.body)).to.not.match(/statement timeout|57014|withdrawals/);
    expect(await countRows('withdrawals', { user_id: user.id })).to.equal(0);
    expect(await userBalance(user.id)).to.equal(500_000);
    expect(await countRows('idempotency_keys', { key: idem })).to.equal(0);

    await heal('withdrawals');
    const retried = await client.post('/v1/withdrawals').set({ ...bearer(key), 'Idempotency-Key': idem }).send(body);
    expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
    expect(retried.headers['idempotent-replay']).to.equal(undefined);
    const replay = await client.post('/v1/withdrawals').set({ ...bearer(key), 'Idempotency-Key': idem }).send(body);
    expect(replay.status).to.equal(201);
    expect(replay.headers['idempotent-replay']).to.equal('true');
    expect(await countRows('withdrawals', { user_id: user.id })).to.equal(1);
    expect(await userBalance(user.id)).to.equal(400_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('POST /api/jasabayar (order create): 500 DB_ERROR, no order kept; the retry with the same key creates it once', async () => {
    await setOrderConfig({ enabled: true, fee_type: 'fixed', fee_value: 5000, fee_min_idr: 0, fee_max_idr: null, sla_hours: 6, min_item_price_idr: 10_000, max_item_price_idr: 100_000_000 });
    const { user } = await createUser();
    const key = await issueKey(user.id);
    const body = { target_url: 'https://shop.example.com/p/1', item_price: 200_000 };
    const idem = randomUUID();
    broken.push('service_orders');
    await breakInserts('service_orders');

    const failed = await client.post('/api/jasabayar').set({ ...bearer(key), 'Idempotency-Key': idem }).send(body);
    expect(failed.status, JSON.stringify(failed.body)).to.equal(500);
    expect(failed.body.error.code).to.equal('DB_ERROR');
    expect(await countRows('service_orders')).to.equal(0);

    await heal('service_orders');
    const retried = await client.post('/api/jasabayar').set({ ...bearer(key), 'Idempotency-Key': idem }).send(body);
    expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
    expect(await countRows('service_orders')).to.equal(1);
  });

  it('without an Idempotency-Key the same failure is DB_ERROR too, and nothing is taken', async () => {
    const user = await fundedUser(500_000);
    const key = await issueKey(user.id);
    broken.push('withdrawals');
    await breakInserts('withdrawals');
    const failed = await client.post('/v1/withdrawals').set(bearer(key)).send({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank() });
    expect([failed.status, failed.body.error.code]).to.deep.equal([500, 'DB_ERROR']);
    expect(await userBalance(user.id)).to.equal(500_000);
    expect(await countRows('withdrawals', { user_id: user.id })).to.equal(0);
  });
});

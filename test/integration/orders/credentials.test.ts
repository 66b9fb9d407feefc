/**
 * Delivered credentials (consumer spec 4.8 get; issue 11): sealed with AES-256-GCM at rest,
 * plaintext only for the owner, never for an admin or another user, never in an answer to
 * staff, a stored idempotent answer, an event, the audit or a log line. The first read stamps
 * first_viewed_at and appends a viewed event once, best effort. DECRYPT_FAILED when the
 * stored credentials cannot be opened.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { symbols } from 'pino';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { fundUser } from '../../helpers/platform-factories.js';
import { createOrder } from '../../factories/orders.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { accessStream, flushAccessLines, logger } from '../../../shared/logger.js';
import type { OrderRow } from '../../../shared/orders/repo.js';
import { getForReader } from '../../../shared/orders/service.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const T0 = new Date('2026-12-12T08:00:00.000Z');
const SECRET = 'email: pembeli@contoh.id / sandi: Rahasia-7x9Q-ZZ';

interface Writable {
  write: (chunk: string) => unknown;
}

/** Captures every log line (application log at trace level, access log, stdout, stderr) while `fn` runs. */
async function capturingLogs(fn: () => Promise<void>): Promise<string> {
  const chunks: string[] = [];
  const appStream = (logger as unknown as Record<symbol, Writable>)[symbols.streamSym]!;
  const targets: Writable[] = [appStream, accessStream, process.stdout, process.stderr];
  const originals = targets.map((t) => t.write);
  const level = logger.level;
  logger.level = 'trace';
  targets.forEach((t) => {
    t.write = (chunk: string) => {
      chunks.push(String(chunk));
      return true;
    };
  });
  try {
    await fn();
    flushAccessLines(); // access lines wait up to 100 ms for their batch
  } finally {
    targets.forEach((t, i) => {
      t.write = originals[i]!;
    });
    logger.level = level;
  }
  return chunks.join('');
}

describe('payment-service orders: delivered credentials', () => {
  let client: Client;
  let buyer: UserRow;
  let key: string;
  let adminKey: string;
  let order: OrderRow;

  beforeEach(async () => {
    clock.set(T0);
    client = api();
    buyer = (await createUser()).user;
    key = await issueKey(buyer.id);
    adminKey = await issueKey((await createUser({ role: 'admin' })).user.id);
    order = await createOrder(buyer.id, { itemPrice: 50_000 });
    await fundUser(buyer.id, order.total);
  });

  afterEach(async () => {
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  async function deliver(): Promise<string> {
    expect((await client.post(`/api/jasabayar/${order.id}/pay`).set(bearer(key)).send({ method: 'balance' })).status).to.equal(200);
    expect((await client.post(`/v1/admin/jasabayar/${order.id}/start`).set(bearer(adminKey)).send({})).status).to.equal(200);
    const res = await client.post(`/v1/admin/jasabayar/${order.id}/deliver`).set(bearer(adminKey)).set('Idempotency-Key', '4f7c1a52-9d1e-4b8a-8c3e-2a6b5d7e9f01').send({ credentials: SECRET, delivery_note: 'Akun siap' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return JSON.stringify(res.body);
  }

  it('sealed at rest; the owner reads plaintext; an admin and another user never do; nowhere else in the database or the logs', async () => {
    let answers = '';
    const logs = await capturingLogs(async () => {
      answers += await deliver();
      const admin = await client.get(`/api/jasabayar/${order.id}`).set(bearer(adminKey));
      expect(admin.status).to.equal(200);
      expect(admin.body.data).to.deep.include({ has_credentials: true, credentials: null, first_viewed_at: null });
      answers += JSON.stringify(admin.body);
      const strangerKey = await issueKey((await createUser()).user.id);
      const stranger = await client.get(`/api/jasabayar/${order.id}`).set(bearer(strangerKey));
      expect(stranger.status).to.equal(403);
      answers += JSON.stringify(stranger.body);
      answers += JSON.stringify((await client.get('/api/jasabayar').set(bearer(key))).body);
      const owner = await client.get(`/api/jasabayar/${order.id}`).set(bearer(key));
      expect(owner.status).to.equal(200);
      expect(owner.body.data).to.deep.include({ credentials: SECRET, has_credentials: true, delivery_note: 'Akun siap' });
      await runJobs();
    });
    expect(answers).to.not.include('Rahasia-7x9Q');
    expect(logs.length, 'the capture saw the request logs').to.be.greaterThan(0);
    expect(logs).to.not.include('Rahasia-7x9Q');

    const row = (await db('service_orders').where({ id: order.id }).first()) as OrderRow;
    expect(row.credentials_sealed).to.match(/^v1\./);
    expect(row.credentials_sealed).to.not.include('Rahasia');
    expect(decryptSecret(row.credentials_sealed!)).to.equal(SECRET);
    for (const table of ['service_order_events', 'staff_audit', 'idempotency_keys', 'outbox', 'journal_entries', 'notifications']) {
      const dump = JSON.stringify(await db(table).select('*'));
      expect(dump, `${table} holds the plaintext`).to.not.include('Rahasia-7x9Q');
    }
  });

  it('the first owner read stamps first_viewed_at and appends one viewed event; later reads and admin reads do not', async () => {
    await deliver();
    clock.advance(60_000);
    await client.get(`/api/jasabayar/${order.id}`).set(bearer(adminKey));
    expect(((await db('service_orders').where({ id: order.id }).first()) as OrderRow).first_viewed_at).to.equal(null);
    const first = await client.get(`/api/jasabayar/${order.id}`).set(bearer(key));
    const viewedAt = clock.now().toISOString();
    expect(first.body.data.first_viewed_at).to.equal(viewedAt);
    const events = (first.body as { data: { events: { event: string; actor_role: string }[] } }).data.events;
    expect(events.map((e) => `${e.event}/${e.actor_role}`)).to.deep.equal([
      'order.created/buyer', 'order.paid/buyer', 'order.processing/admin', 'order.delivered/admin', 'order.credentials_viewed/buyer',
    ]);
    clock.advance(60_000);
    const second = await client.get(`/api/jasabayar/${order.id}`).set(bearer(key));
    expect(second.body.data.first_viewed_at).to.equal(viewedAt);
    expect(await db('service_order_events').where({ order_id: order.id, event: 'order.credentials_viewed' }).count<{ n: number }[]>({ n: '*' })).to.deep.equal([{ n: 1 }]);
  });

  it('best effort: when recording the first view fails, the owner still gets the credentials', async () => {
    await deliver();
    await db.raw(`CREATE FUNCTION orders_test_refuse_view() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
                  CREATE TRIGGER orders_test_refuse_view BEFORE INSERT ON service_order_events FOR EACH ROW WHEN (NEW.event = 'order.credentials_viewed') EXECUTE FUNCTION orders_test_refuse_view();`);
    try {
      const res = await client.get(`/api/jasabayar/${order.id}`).set(bearer(key));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.include({ credentials: SECRET, first_viewed_at: null });
    } finally {
      await db.raw('DROP TRIGGER orders_test_refuse_view ON service_order_events; DROP FUNCTION orders_test_refuse_view();');
    }
  });

  it('500 DECRYPT_FAILED when the stored credentials cannot be opened (tampered, or the key is wrong); no plaintext anywhere', async () => {
    await deliver();
    try {
      await getForReader({ userId: buyer.id, role: 'user' }, order.id, randomBytes(32));
      expect.fail('a wrong key opened the credentials');
    } catch (err) {
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).code).to.equal('DECRYPT_FAILED');
    }
    const sealed = ((await db('service_orders').where({ id: order.id }).first()) as OrderRow).credentials_sealed!;
    const [v, iv, , body] = sealed.split('.');
    await db('service_orders').where({ id: order.id }).update({ credentials_sealed: [v, iv, randomBytes(16).toString('base64url'), body].join('.') });
    const res = await client.get(`/api/jasabayar/${order.id}`).set(bearer(key));
    expect(res.status).to.equal(500);
    expect(res.body.error.code).to.equal('DECRYPT_FAILED');
    expect(JSON.stringify(res.body)).to.not.include('Rahasia');
    expect(((await db('service_orders').where({ id: order.id }).first()) as OrderRow).first_viewed_at).to.equal(null);
  });

  it('an admin and the buyer cannot see credentials before delivery', async () => {
    const res = await client.get(`/api/jasabayar/${order.id}`).set(bearer(key));
    expect(res.body.data).to.deep.include({ credentials: null, has_credentials: false });
  });
});

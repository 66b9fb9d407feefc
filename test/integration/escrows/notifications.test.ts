/**
 * In-app notifications of the escrow lifecycle (consumer spec 2, 4.6, 6): written only by
 * the notifications worker from outbox jobs, one per event and party, with escaped HTML
 * bodies and escrow metadata; a re-run job writes nothing twice and a rolled-back change
 * notifies no one.
 */
import { expect } from 'chai';
import type { Job } from 'bullmq';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow, signFields } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { redis } from '../../../shared/redis.js';
import * as escrows from '../../../shared/escrows/service.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import { createFromJob, type NotificationRow } from '../../../shared/notifications/service.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { JobData } from '../../../shared/queues.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { buildRegistry } from '../../../workers/registry.js';

type NoteRow = NotificationRow & { source_key: string };

async function allNotes(): Promise<NoteRow[]> {
  return (await db('notifications').select('*').orderBy([{ column: 'created_at' }, { column: 'type' }, { column: 'user_id' }])) as NoteRow[];
}

async function noteCount(): Promise<number> {
  const [row] = await db('notifications').count<{ n: number }[]>('* as n');
  return Number(row!.n);
}

/** Reports the notifications written since the last call, as sorted "who:type" strings. */
class NoteWatcher {
  private seen = new Set<string>();
  constructor(private readonly names: Map<string, string>) {}

  async fresh(): Promise<NoteRow[]> {
    const rows = (await allNotes()).filter((r) => !this.seen.has(r.id));
    for (const r of rows) this.seen.add(r.id);
    return rows;
  }

  label(rows: NoteRow[]): string[] {
    return rows.map((r) => `${this.names.get(r.user_id) ?? r.user_id}:${r.type}`).sort();
  }

  /** Runs the jobs and returns the labels of the rows they wrote. Asserts none were written before. */
  async afterJobs(): Promise<{ labels: string[]; rows: NoteRow[] }> {
    expect(this.label(await this.fresh()), 'notifications written before the jobs ran').to.deep.equal([]);
    const ran = await runJobs();
    expect(ran.filter((j) => j.error).map((j) => `${j.name}: ${j.error}`)).to.deep.equal([]);
    const rows = await this.fresh();
    return { labels: this.label(rows), rows };
  }
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const registry = buildRegistry();

describe('escrow notifications', () => {
  let buyer: UserRow;
  let seller: UserRow;
  let bk: string;
  let sk: string;

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    buyer = (await createUser()).user;
    seller = (await createUser()).user;
    bk = await issueKey(buyer.id);
    sk = await issueKey(seller.id);
  });

  it('are written only through the outbox: none before runJobs(), one row after', async () => {
    const client = api();
    const res = await client
      .post('/api/escrows')
      .set(bearer(bk))
      .send({ role: 'buyer', counterparty_username: seller.username, item_name: 'Sepatu lari', amount: 150_000 });
    expect(res.status, res.text).to.equal(201);
    const id = res.body.data.id as string;
    expect(await noteCount()).to.equal(0);
    const queued = (await db('outbox').where({ job: 'notifications.create' })) as { payload: Record<string, unknown>; relayed_at: Date | null }[];
    expect(queued.map((q) => q.payload)).to.deep.equal([{ user_id: seller.id, type: 'escrow_invited', escrow_id: id, dispute_id: null, outcome: null }]);
    expect(queued[0]!.relayed_at).to.equal(null);

    await runJobs();
    const notes = await allNotes();
    expect(notes).to.have.length(1);
    const n = notes[0]!;
    expect(n.user_id).to.equal(seller.id);
    expect(n.type).to.equal('escrow_invited');
    expect(n.title).to.equal('Escrow baru');
    expect(n.body).to.equal('Anda diajak ke escrow untuk <strong>Sepatu lari</strong> senilai Rp150.000.');
    expect(n.metadata).to.deep.equal({ escrow_id: id, amount: 150_000 });
    expect(n.is_read).to.equal(false);
    expect(n.created_at.toISOString()).to.equal(clock.now().toISOString());
    const outbox = (await db('outbox').where({ job: 'notifications.create' }).first()) as { id: number; completed_at: Date | null };
    expect(n.source_key).to.equal(`outbox-${outbox.id}`);
    expect(outbox.completed_at).to.not.equal(null);
  });

  it('one notice per event and party through a whole link escrow: joined, paid, sent, received, completed', async () => {
    const client = api();
    const names = new Map([
      [buyer.id, 'buyer'],
      [seller.id, 'seller'],
    ]);
    const watch = new NoteWatcher(names);

    const rot = await client.post('/v1/partner/link-secret/rotate').set(bearer(sk)).send({});
    expect(rot.status, rot.text).to.equal(200);
    const fields = { seller: seller.id, item: 'Kamera bekas', category: 'goods', ref: 'ord-77', v: '1', expires: String(Math.floor(clock.nowMs() / 1000) + 3600) };
    const link = `${config.publicBaseUrl}/pay?${new URLSearchParams({ ...fields, sig: signFields(rot.body.data.link_secret as string, fields) }).toString()}`;
    const created = await client.post('/api/escrows/from-link').set(bearer(bk)).send({ link, amount: 1_000_000 });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data.id as string;
    let step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['seller:escrow_joined']);
    expect(step.rows[0]!.title).to.equal('Pembeli bergabung');
    expect(step.rows[0]!.body).to.equal('Seorang pembeli membuat escrow untuk <strong>Kamera bekas</strong> senilai Rp1.000.000.');

    await escrows.markPaid(undefined, id, { reference: 'pay-77' });
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:payment_success', 'seller:escrow_paid']);
    for (const r of step.rows) expect(r.metadata).to.deep.equal({ escrow_id: id, amount: 1_000_000 });
    expect(step.rows.find((r) => r.type === 'payment_success')!.body).to.equal(
      'Pembayaran Rp1.000.000 untuk <strong>Kamera bekas</strong> diterima dan ditahan di escrow.',
    );

    const sent = await client.post(`/api/escrows/${id}/send`).set(bearer(sk)).send({ courier: 'jne', tracking_number: 'JNE12345' });
    expect(sent.status, sent.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:escrow_sent']);

    const rec = await client.post(`/api/escrows/${id}/confirm-received`).set(bearer(bk)).send({});
    expect(rec.status, rec.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['seller:escrow_received']);

    // Extending writes no notice.
    const ext = await client.post(`/api/escrows/${id}/extend`).set(bearer(bk)).send({});
    expect(ext.status, ext.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal([]);

    const rel = await client.post(`/api/escrows/${id}/release`).set(bearer(bk)).send({});
    expect(rel.status, rel.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:escrow_completed_buyer', 'seller:escrow_completed_seller']);
    for (const r of step.rows) expect(r.metadata).to.deep.equal({ escrow_id: id, amount: 1_000_000 });
    expect(step.rows.find((r) => r.type === 'escrow_completed_seller')!.title).to.equal('Dana dilepas');

    // Nothing more is queued: a further run writes nothing.
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal([]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('direct creation invites the counterparty: the seller when the buyer opens it, the buyer when the seller does', async () => {
    const client = api();
    const watch = new NoteWatcher(
      new Map([
        [buyer.id, 'buyer'],
        [seller.id, 'seller'],
      ]),
    );
    const byBuyer = await client.post('/api/escrows').set(bearer(bk)).send({ role: 'buyer', counterparty_username: seller.username, item_name: 'Jasa desain', amount: 50_000, category: 'service' });
    expect(byBuyer.status, byBuyer.text).to.equal(201);
    let step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['seller:escrow_invited']);
    const bySeller = await client.post('/api/escrows').set(bearer(sk)).send({ role: 'seller', counterparty_username: buyer.username, item_name: 'Jasa desain', amount: 60_000, category: 'service' });
    expect(bySeller.status, bySeller.text).to.equal(201);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:escrow_invited']);
    expect(step.rows[0]!.metadata).to.deep.equal({ escrow_id: bySeller.body.data.id, amount: 60_000 });
  });

  it('a cancel notifies the other party only; a staff cancel notifies both', async () => {
    const client = api();
    const admin = (await createUser({ role: 'admin' })).user;
    const ak = await issueKey(admin.id);
    const watch = new NoteWatcher(
      new Map([
        [buyer.id, 'buyer'],
        [seller.id, 'seller'],
        [admin.id, 'admin'],
      ]),
    );
    const a = await createEscrow({ buyer, seller });
    const b = await createEscrow({ buyer, seller });
    const c = await createEscrow({ buyer, seller });
    await watch.afterJobs(); // the three invitations

    const r1 = await client.post(`/api/escrows/${a.escrow.id}/cancel`).set(bearer(bk)).send({ reason: 'salah pesan' });
    expect(r1.status, r1.text).to.equal(200);
    let step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['seller:escrow_cancelled']);
    expect(step.rows[0]!.metadata).to.deep.equal({ escrow_id: a.escrow.id, amount: 150_000 });

    const r2 = await client.post(`/api/escrows/${b.escrow.id}/cancel`).set(bearer(sk)).send({});
    expect(r2.status, r2.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:escrow_cancelled']);

    const r3 = await client.post(`/v1/admin/escrows/${c.escrow.id}/cancel`).set(bearer(ak)).send({ reason: 'fraud check' });
    expect(r3.status, r3.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:escrow_cancelled', 'seller:escrow_cancelled']);
  });

  it('disputes: opened notifies the other party and every active admin; messages the other party; rulings both parties with their outcome', async () => {
    const client = api();
    const admin1 = (await createUser({ role: 'admin' })).user;
    const admin2 = (await createUser({ role: 'admin' })).user;
    const retired = (await createUser({ role: 'admin', status: 'suspended' })).user;
    const bystander = (await createUser()).user;
    const ak = await issueKey(admin1.id);
    const watch = new NoteWatcher(
      new Map([
        [buyer.id, 'buyer'],
        [seller.id, 'seller'],
        [admin1.id, 'admin1'],
        [admin2.id, 'admin2'],
        [retired.id, 'retired'],
        [bystander.id, 'bystander'],
      ]),
    );
    const { escrow } = await createEscrow({ status: 'sent', buyer, seller, amount: 1_000_000 });
    await watch.afterJobs();

    const opened = await client.post(`/v1/escrows/${escrow.id}/dispute`).set(bearer(bk)).send({ reason_category: 'item_not_received', description: 'Belum sampai' });
    expect(opened.status, opened.text).to.equal(201);
    const disputeId = opened.body.data.id as string;
    let step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['admin1:dispute_opened', 'admin2:dispute_opened', 'seller:dispute_opened']);
    for (const r of step.rows) expect(r.metadata).to.deep.equal({ escrow_id: escrow.id, amount: 1_000_000, dispute_id: disputeId });

    const msg = await client.post(`/v1/disputes/${disputeId}/messages`).set(bearer(sk)).send({ message: 'Sudah dikirim, ini resinya' });
    expect(msg.status, msg.text).to.equal(201);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:dispute_message']);

    const hold = await client.post(`/v1/admin/disputes/${disputeId}/resolve`).set(bearer(ak)).send({ outcome: 'hold', note: 'waiting for the courier' });
    expect(hold.status, hold.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:dispute_resolved', 'seller:dispute_resolved']);
    for (const r of step.rows) {
      expect(r.metadata).to.deep.equal({ escrow_id: escrow.id, amount: 1_000_000, dispute_id: disputeId, outcome: 'hold' });
      expect(r.body).to.contain('<strong>hold</strong>');
    }

    const refund = await client.post(`/v1/admin/disputes/${disputeId}/resolve`).set(bearer(ak)).send({ outcome: 'refund' });
    expect(refund.status, refund.text).to.equal(200);
    step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:dispute_resolved', 'buyer:escrow_refunded', 'seller:dispute_resolved', 'seller:escrow_refunded']);
    for (const r of step.rows.filter((x) => x.type === 'dispute_resolved')) {
      expect(r.metadata).to.deep.equal({ escrow_id: escrow.id, amount: 1_000_000, dispute_id: disputeId, outcome: 'refund' });
    }
    // The hold notices keep the outcome they were written with.
    const holds = (await allNotes()).filter((r) => r.type === 'dispute_resolved' && r.metadata.outcome === 'hold');
    expect(holds).to.have.length(2);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a release ruling notifies both parties with outcome release and the completion notices', async () => {
    const admin = (await createUser({ role: 'admin' })).user;
    const ak = await issueKey(admin.id);
    const watch = new NoteWatcher(
      new Map([
        [buyer.id, 'buyer'],
        [seller.id, 'seller'],
        [admin.id, 'admin'],
      ]),
    );
    const { escrow } = await createEscrow({ status: 'disputed', buyer, seller });
    await watch.afterJobs();
    const d = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
    const res = await api().post(`/v1/admin/disputes/${d.id}/resolve`).set(bearer(ak)).send({ outcome: 'release' });
    expect(res.status, res.text).to.equal(200);
    const step = await watch.afterJobs();
    expect(step.labels).to.deep.equal(['buyer:dispute_resolved', 'buyer:escrow_completed_buyer', 'seller:dispute_resolved', 'seller:escrow_completed_seller']);
    expect(step.rows.filter((r) => r.type === 'dispute_resolved').map((r) => r.metadata.outcome)).to.deep.equal(['release', 'release']);
  });

  it('the body is HTML with every interpolated value escaped', async () => {
    const client = api();
    const evil = '<img src=x onerror=alert(1)>';
    const res = await client.post('/api/escrows').set(bearer(bk)).send({ role: 'buyer', counterparty_username: seller.username, item_name: evil, amount: 150_000 });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.item_name).to.equal(evil);
    const quoted = await client
      .post('/api/escrows')
      .set(bearer(bk))
      .send({ role: 'buyer', counterparty_username: seller.username, item_name: `Tom & "Jerry's" </strong><script>x</script>`, amount: 150_000 });
    expect(quoted.status, quoted.text).to.equal(201);
    await runJobs();
    const notes = await allNotes();
    const img = notes.find((n) => n.metadata.escrow_id === res.body.data.id)!;
    expect(img.body).to.equal('Anda diajak ke escrow untuk <strong>&lt;img src=x onerror=alert(1)&gt;</strong> senilai Rp150.000.');
    expect(img.body).to.not.contain('<img');
    const q = notes.find((n) => n.metadata.escrow_id === quoted.body.data.id)!;
    expect(q.body).to.equal(
      'Anda diajak ke escrow untuk <strong>Tom &amp; &quot;Jerry&#39;s&quot; &lt;/strong&gt;&lt;script&gt;x&lt;/script&gt;</strong> senilai Rp150.000.',
    );
    // The only tags in a body are the template's own.
    for (const n of notes) expect(n.body.replace(/<\/?strong>/g, '')).to.not.match(/[<>]/);
  });

  describe('re-runs and rollbacks', () => {
    it('an outbox row sent twice (Redis lost the completed job) writes one row', async () => {
      const { escrow } = await createEscrow({ buyer, seller });
      let ran = await runJobs();
      expect(ran.filter((j) => j.name === 'notifications.create').map((j) => j.result)).to.deep.equal([{ created: true }]);
      expect(await noteCount()).to.equal(1);

      await redis.flushdb();
      const reset = await db('outbox').where({ job: 'notifications.create' }).update({ relayed_at: null, completed_at: null });
      expect(reset).to.equal(1);
      ran = await runJobs();
      expect(ran.filter((j) => j.name === 'notifications.create').map((j) => j.result)).to.deep.equal([{ created: false }]);
      const notes = await allNotes();
      expect(notes.map((n) => [n.user_id, n.type, n.metadata.escrow_id])).to.deep.equal([[seller.id, 'escrow_invited', escrow.id]]);
    });

    it('the same job through the processor twice, and createFromJob twice with one source key, write one row', async () => {
      const { escrow } = await createEscrow({ buyer, seller, status: 'paid' });
      const data = { user_id: seller.id, type: 'escrow_paid', escrow_id: escrow.id, dispute_id: null, outcome: null };
      const job = { id: 'outbox-424242', name: 'notifications.create', data } as unknown as Job<JobData>;
      const processor = registry.get('notifications.create')!;
      expect(await processor(job)).to.deep.equal({ created: true });
      expect(await processor(job)).to.deep.equal({ created: false });
      expect(await db('notifications').where({ source_key: 'outbox-424242' })).to.have.length(1);

      const input = { user_id: buyer.id, type: 'payment_success' as const, escrow_id: escrow.id, dispute_id: null, outcome: null };
      expect(await createFromJob('manual-key-1', input)).to.deep.equal({ created: true });
      expect(await createFromJob('manual-key-1', input)).to.deep.equal({ created: false });
      const [both1, both2] = await Promise.all([createFromJob('manual-key-2', input), createFromJob('manual-key-2', input)]);
      expect([both1.created, both2.created].sort()).to.deep.equal([false, true]);
      expect(await db('notifications').where({ user_id: buyer.id, type: 'payment_success' })).to.have.length(2);
    });

    it('a rolled-back change notifies no one', async () => {
      const { escrow } = await createEscrow({ buyer, seller });
      await runJobs();
      const before = await noteCount();
      const boom = new Error('boom after the move');
      const failed = await db
        .transaction(async (trx) => {
          await escrows.markPaid(trx, escrow.id, { reference: 'rolled-back' });
          throw boom;
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(failed).to.equal(boom);
      expect(((await db('escrows').where({ id: escrow.id }).first()) as EscrowRow).status).to.equal('pending_payment');
      expect(await db('outbox').whereRaw(`payload->>'type' in ('payment_success', 'escrow_paid')`)).to.deep.equal([]);
      await runJobs();
      expect(await noteCount()).to.equal(before);

      // A database error later in the same transaction undoes the move and its notice.
      await escrows.markPaid(undefined, escrow.id, { reference: 'real' });
      await runJobs();
      const afterPaid = await noteCount();
      const dbError = await db
        .transaction(async (trx) => {
          await escrows.send(trx, { userId: seller.id, role: 'user' }, escrow.id, {});
          await trx.raw('SELECT 1 / 0');
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(dbError).to.be.instanceOf(Error);
      expect((dbError as Error).message).to.contain('division by zero');
      expect(((await db('escrows').where({ id: escrow.id }).first()) as EscrowRow).status).to.equal('paid');
      await runJobs();
      expect(await noteCount()).to.equal(afterPaid);
      expect(await db('notifications').where({ type: 'escrow_sent' })).to.deep.equal([]);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });
});

/**
 * Notifications (consumer spec 4.6, 2 "Notification", 8): the owner's list, unread count,
 * read marks, preferences (in-app and e-mail per type), escaped bodies, withdrawal notices.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { createWithdrawal, staffUser } from '../../factories/withdrawals.js';
import { db } from '../../../shared/db.js';
import { noticeSettings } from '../../../shared/notifications/settings.js';
import { MailSink } from '../../helpers/smtp.js';
import { approve, markPaid, reject } from '../../../shared/withdrawals/service.js';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
/** Notices, then the mail they queue (the mail queue runs before the notifications queue). */
async function settle(): Promise<void> {
  await runJobs();
  await runJobs();
}

describe('notifications: list, count, read marks and preferences', () => {
  const sink = new MailSink();
  before(async () => {
    noticeSettings.emails = true;
    await sink.start();
  });
  after(async () => {
    noticeSettings.emails = false;
    await sink.stop();
  });
  it('lists only the owner\'s notices, newest first, with escaped HTML and pagination', async () => {
    const { user: buyer } = await createUser();
    const { user: stranger } = await createUser();
    await createEscrow({ buyer, status: 'paid', item: '<img src=x onerror=alert(1)> & "co"' });
    await settle();
    const key = await issueKey(buyer.id);
    const res = await api().get('/v1/notifications').set(bearer(key));
    expect(res.status).to.equal(200);
    const types = (res.body.data as { type: string }[]).map((n) => n.type);
    expect(types).to.include('payment_success');
    const pay = (res.body.data as Record<string, unknown>[]).find((n) => n.type === 'payment_success')!;
    expect(pay.body).to.contain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;co&quot;');
    expect(pay.body).not.to.contain('<img');
    expect(pay).to.include({ user_id: buyer.id, is_read: false, total_count: String(types.length) });
    expect(pay.metadata).to.have.property('escrow_id');
    expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: types.length, total_pages: 1 });

    const other = await api().get('/v1/notifications').set(bearer(await issueKey(stranger.id)));
    expect(other.body.data).to.deep.equal([]);
    expect((await api().get('/v1/notifications?limit=51').set(bearer(key))).body.error.code).to.equal('INVALID_QUERY');
    expect((await api().get('/v1/notifications?limit=0').set(bearer(key))).status).to.equal(400);
    expect((await api().get('/v1/notifications')).status).to.equal(401);
  });

  it('counts unread as a string, marks one read (another user\'s: 403, unknown: 404) and all read', async () => {
    const { user: buyer } = await createUser();
    const { user: stranger } = await createUser();
    await createEscrow({ buyer, status: 'sent' });
    await settle();
    const key = await issueKey(buyer.id);
    const strangerKey = await issueKey(stranger.id);
    const count = async (k: string) => (await api().get('/v1/notifications/unread-count').set(bearer(k))).body.data.count as string;
    const before = await count(key);
    expect(before).to.match(/^[0-9]+$/);
    expect(Number(before)).to.be.greaterThan(1);
    expect(await count(strangerKey)).to.equal('0');

    const list = await api().get('/v1/notifications?unread_only=true').set(bearer(key));
    const id = list.body.data[0].id as string;
    const foreign = await api().patch(`/v1/notifications/${id}/read`).set(bearer(strangerKey));
    expect(foreign.status).to.equal(403);
    expect(foreign.body.error.code).to.equal('FORBIDDEN');
    expect(JSON.stringify(foreign.body)).not.to.contain(id);
    expect((await api().patch('/v1/notifications/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f/read').set(bearer(key))).status).to.equal(404);
    expect(await count(key)).to.equal(before);

    const marked = await api().patch(`/v1/notifications/${id}/read`).set(bearer(key));
    expect(marked.status).to.equal(200);
    expect(marked.body.data).to.deep.equal({ id, is_read: true });
    expect(await count(key)).to.equal(String(Number(before) - 1));
    const unread = await api().get('/v1/notifications?unread_only=true').set(bearer(key));
    expect((unread.body.data as { id: string }[]).map((n) => n.id)).not.to.include(id);

    // Another user's mark-all-read leaves this user's notices alone.
    await api().post('/v1/notifications/mark-all-read').set(bearer(strangerKey));
    expect(await count(key)).to.equal(String(Number(before) - 1));
    const all = await api().post('/v1/notifications/mark-all-read').set(bearer(key));
    expect(all.status).to.equal(200);
    expect(await count(key)).to.equal('0');
    expect((await api().patch('/v1/notifications/not-a-uuid/read').set(bearer(key))).status).to.equal(404);
    // unread_only also takes 1 and 0.
    expect((await api().get('/v1/notifications?unread_only=1').set(bearer(key))).body.data).to.deep.equal([]);
    expect((await api().get('/v1/notifications?unread_only=0').set(bearer(key))).body.data.length).to.be.greaterThan(1);
  });

  it('a notice of the owner hidden by the in-app preference is 404 to the owner, 403 to a stranger', async () => {
    const { user: owner } = await createUser();
    const { user: stranger } = await createUser();
    const [hidden] = await db('notifications')
      .insert({ user_id: owner.id, type: 'payment_success', title: 'Pembayaran berhasil', body: '<p>x</p>', in_app: false, source_key: 'hidden-test', created_at: new Date() })
      .returning<{ id: string }[]>('id');
    const mark = async (userId: string) => api().patch(`/v1/notifications/${hidden!.id}/read`).set(bearer(await issueKey(userId)));
    const own = await mark(owner.id);
    expect(own.status).to.equal(404);
    expect(own.body.error.code).to.equal('NOT_FOUND');
    expect((await mark(stranger.id)).status).to.equal(403);
  });

  it('preferences: in-app off hides the notice, e-mail off sends no mail; defaults send both', async () => {
    const { user: buyer } = await createUser();
    const key = await issueKey(buyer.id);
    const got = await api().get('/v1/notifications/preferences').set(bearer(key));
    expect(got.body.data.preferences.payment_success).to.deep.equal({ in_app: true, email: true });

    await createEscrow({ buyer, status: 'paid' });
    await settle();
    const mails = () => db('outbound_emails').where({ user_id: buyer.id, template: 'notification.payment_success' });
    expect(await mails()).to.have.length(1);
    const delivered = sink.messages.filter((m) => m.to.includes(buyer.email) && m.subject === 'Pembayaran berhasil');
    expect(delivered, JSON.stringify(sink.messages.map((m) => [m.to, m.subject]))).to.have.length(1);

    const put = await api()
      .put('/v1/notifications/preferences')
      .set(bearer(key))
      .send({ preferences: { payment_success: { in_app: false }, escrow_sent: { email: false } } });
    expect(put.status).to.equal(200);
    expect(put.body.data.preferences.payment_success).to.deep.equal({ in_app: false, email: true });
    expect(put.body.data.preferences.escrow_sent).to.deep.equal({ in_app: true, email: false });
    expect((await api().put('/v1/notifications/preferences').set(bearer(key)).send({ preferences: { nope: { email: true } } })).body.error.code).to.equal('INVALID_BODY');

    await createEscrow({ buyer, status: 'sent' });
    await settle();
    const list = await api().get('/v1/notifications?limit=50').set(bearer(key));
    const types = (list.body.data as { type: string }[]).map((n) => n.type);
    expect(types.filter((t) => t === 'payment_success')).to.have.length(1); // the second is hidden
    expect(types).to.include('escrow_sent');
    expect(await mails()).to.have.length(2); // e-mail still on for payment_success
    expect(await db('outbound_emails').where({ user_id: buyer.id, template: 'notification.escrow_sent' })).to.have.length(0);
    // Re-running the jobs sends nothing twice.
    await settle();
    expect(await mails()).to.have.length(2);
  });

  it('e-mails the events a user expects: paid, shipped, released for both parties, and a paid withdrawal', async () => {
    const { buyer, seller } = await createEscrow({ status: 'released' });
    await settle();
    const templates = async (userId: string) =>
      (await db('outbound_emails').where({ user_id: userId }).select<{ template: string }[]>('template')).map((r) => r.template).sort();
    expect(await templates(buyer.id)).to.deep.equal(['notification.escrow_completed_buyer', 'notification.escrow_sent', 'notification.payment_success']);
    expect(await templates(seller.id)).to.deep.equal(['notification.escrow_completed_seller', 'notification.escrow_paid']);
    expect(sink.messages.filter((m) => m.to.includes(seller.email)).map((m) => m.subject).sort()).to.deep.equal(['Dana dilepas', 'Escrow dibayar']);

    const admin = await staffUser();
    const { withdrawal, user } = await createWithdrawal({ amount: 100_000 });
    await approve(undefined, { actorId: admin.id }, withdrawal.id);
    await markPaid(undefined, { actorId: admin.id }, withdrawal.id, { reference: 'BANK-1' });
    await settle();
    expect(await templates(user.id)).to.deep.equal(['notification.withdrawal_paid']);
    const note = await db('notifications').where({ user_id: user.id, type: 'withdrawal_paid' }).first<{ metadata: Record<string, unknown> }>();
    expect(note?.metadata).to.include({ withdrawal_id: withdrawal.id });
  });

  it('a rejected withdrawal notifies its owner in-app and by e-mail', async () => {
    const admin = await staffUser();
    const { withdrawal, user } = await createWithdrawal({ amount: 100_000 });
    await reject(undefined, { actorId: admin.id }, withdrawal.id, { note: 'rekening <salah>' });
    await settle();
    const rows = await db('notifications').where({ user_id: user.id, type: 'withdrawal_rejected' });
    expect(rows).to.have.length(1);
    expect(rows[0].metadata).to.include({ withdrawal_id: withdrawal.id });
    expect(rows[0].body).to.contain('rekening &lt;salah&gt;');
    expect(await db('outbound_emails').where({ user_id: user.id, template: 'notification.withdrawal_rejected' })).to.have.length(1);
  });
});

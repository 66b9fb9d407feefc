/**
 * Webhook delivery (D8; decision 0020 "Webhooks") against loopback receivers: Standard
 * Webhooks signatures checked with the `standardwebhooks` package, the body `{ id, type,
 * created_at, livemode, data }` with `data` exactly the feed's Event item, per-endpoint
 * filters, retries on the schedule against a receiver that fails then recovers (the clock
 * moved, due jobs run), every attempt recorded, an endpoint disabled after the whole
 * schedule failed with its admins e-mailed, a paused or disabled endpoint receiving what it
 * missed in order once resumed, redelivery with the same webhook-id and body, webhook.test,
 * a hanging receiver timed out, the answer read up to its cap, one delivery in flight per
 * endpoint, a lost nudge caught by the sweeper, and a dead run's lease taken over.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { startReceiver, verified, type Receiver } from '../../helpers/webhook-receiver.js';
import { addMember, createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import { actorOf, feedEvent, makeEndpoint } from '../../factories/webhooks.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { appendEvent } from '../../../shared/enterprise/events.js';
import { createCounterparty } from '../../../shared/enterprise/service.js';
import { runEndpoint, sweepWebhooks } from '../../../shared/webhooks/delivery.js';
import { webhookSettings } from '../../../shared/webhooks/settings.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../../shared/webhooks/states.js';

const E = '/v1/enterprise';

describe('webhook delivery', function () {
  this.timeout(30_000);
  const client = api();
  let rx: Receiver;
  const savedTimeout = webhookSettings.timeoutMs;

  beforeEach(async () => {
    // A pinned clock: timestamps compared below do not cross a second while the test runs.
    clock.set(new Date('2026-12-01T08:00:00Z'));
    rx = await startReceiver();
  });
  afterEach(async () => {
    webhookSettings.timeoutMs = savedTimeout;
    await rx.close();
  });

  async function world(events: string[] = ['*']) {
    const ws = await createWorkspace();
    const admin = await addMember(ws.workspace.id, 'admin');
    const actor = actorOf(ws.workspace.id, admin);
    const made = await makeEndpoint(actor, { url: rx.url, events });
    const owner = actorOf(ws.workspace.id, { member: ws.ownerMember, user: ws.owner });
    return { ...ws, admin, actor, ownerActor: owner, endpoint: made.endpoint, secret: made.secret };
  }

  const deliveries = (endpointId: string) => db('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('position');
  const endpointRow = (id: string) => db('webhook_endpoints').where({ id }).first();
  const webhookJobs = async () => (await runJobs(['webhooks'])).filter((j) => j.name.startsWith('webhooks.'));

  it('signs with the Standard Webhooks scheme; the body carries the feed Event item exactly, with its livemode', async () => {
    const w = await world();
    const cp = await createCounterparty(undefined, w.ownerActor, { name: 'PT Pemasok', country_code: 'ID', relationship: 'seller' });
    const ran = await webhookJobs();
    expect(ran.map((j) => j.name)).to.include.members(['webhooks.dispatch', 'webhooks.deliver']);
    expect(ran.filter((j) => j.error)).to.deep.equal([]);
    expect(rx.received).to.have.length(1);
    const r = rx.received[0]!;
    // The receiver's check, as documented by Standard Webhooks.
    const payload = verified(w.secret, r) as { id: string; type: string; created_at: string; livemode: boolean; data: Record<string, unknown> };
    expect(r.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(r.headers['webhook-timestamp']).to.equal(String(Math.floor(clock.nowMs() / 1000)));
    expect(r.at).to.equal(clock.nowMs());
    expect(r.headers['content-type']).to.equal('application/json');
    expect(payload.id).to.equal(r.headers['webhook-id']);
    expect(payload.type).to.equal('counterparty.created');
    // data is the feed's item for the same event, field for field.
    const feed = await client.get(`${E}/events?after=0&limit=100`).set(headersOf(await sessionOf(w.owner)));
    const item = (feed.body.data as { entity_id: string; event: string }[]).find((e) => e.event === 'counterparty.created' && e.entity_id === cp.id);
    expect(payload.data).to.deep.equal(item);
    expect(payload.livemode).to.equal(false);
    expect(payload.created_at).to.equal((item as unknown as { created_at: string }).created_at);
    // A signature made with another secret is refused by the same check.
    expect(() => verified('whsec_' + Buffer.alloc(32, 7).toString('base64'), r)).to.throw();
    const [d] = await deliveries(w.endpoint.id);
    expect(d).to.include({ kind: 'event', attempt: 1, status: 'succeeded', response_status: 200, response_excerpt: 'ok', error: null, message_id: payload.id });
    expect(d.payload).to.equal(r.body);
    expect(Number((await endpointRow(w.endpoint.id)).cursor_seq)).to.equal((item as unknown as { seq: number }).seq);
  });

  it('livemode equals the event\'s: every event of a live workspace is live (issue 42), a sandbox deal\'s event after going live is not', async () => {
    const w = await world();
    await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: false });
    await feedEvent(w.workspace.id, { event: 'milestone.funded', amount: 1_000_000 });
    await createCounterparty(undefined, w.ownerActor, { name: 'PT Live', country_code: 'ID', relationship: 'seller' });
    await feedEvent(w.workspace.id, { event: 'template.created' });
    await feedEvent(w.workspace.id, { event: 'deal.cancelled', sandbox: true });
    await webhookJobs();
    expect(rx.received.map((r) => [r.json.type, r.json.livemode, r.json.data.livemode])).to.deep.equal([
      ['milestone.funded', true, true],
      ['counterparty.created', true, true],
      ['template.created', true, true],
      ['deal.cancelled', false, false],
    ]);
  });

  it('per-endpoint filters: each endpoint receives only its events, in feed order; an endpoint made later starts after its creation', async () => {
    const w = await world(['deal.created', 'milestone.released']);
    await feedEvent(w.workspace.id, { event: 'deal.updated' });
    const other = await startReceiver();
    try {
      const all = await makeEndpoint(w.actor, { url: other.url, events: ['*'] });
      for (const name of ['deal.created', 'deal.updated', 'milestone.funded', 'milestone.released', 'deal.created']) await feedEvent(w.workspace.id, { event: name });
      await webhookJobs();
      expect(rx.received.map((r) => r.json.type)).to.deep.equal(['deal.created', 'milestone.released', 'deal.created']);
      expect(other.received.map((r) => r.json.type)).to.deep.equal(['deal.created', 'deal.updated', 'milestone.funded', 'milestone.released', 'deal.created']);
      const seqs = rx.received.map((r) => r.json.data.seq as number);
      expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
      verified(all.secret, other.received[0]!);
      // The filtered endpoint's cursor moved past the events it does not take.
      const last = Number((await db('workspaces').where({ id: w.workspace.id }).first()).last_event_seq);
      expect(Number((await endpointRow(w.endpoint.id)).cursor_seq)).to.equal(last);
    } finally {
      await other.close();
    }
  });

  it('WEBHOOK_RETRY_SCALE shortens the schedule (the bench): 0.001 waits 5 ms, then 300 ms', async () => {
    const w = await world();
    clock.set(new Date('2026-12-01T08:00:00Z'));
    const was = webhookSettings.retryScale;
    webhookSettings.retryScale = 0.001;
    try {
      rx.answer(() => ({ status: 500 }));
      await feedEvent(w.workspace.id, { event: 'deal.created' });
      await webhookJobs();
      expect(new Date((await endpointRow(w.endpoint.id)).next_attempt_at as Date).getTime()).to.equal(clock.nowMs() + 5);
      clock.advance(5);
      await webhookJobs();
      expect(rx.received).to.have.length(2);
      expect(new Date((await endpointRow(w.endpoint.id)).next_attempt_at as Date).getTime()).to.equal(clock.nowMs() + 300);
    } finally {
      webhookSettings.retryScale = was;
    }
  });

  it('retries a failing receiver on the schedule, in order, recording every attempt, and moves on once it recovers', async () => {
    const w = await world();
    clock.set(new Date('2026-12-01T08:00:00Z'));
    let failing = true;
    rx.answer(() => (failing ? { status: 503, body: 'down for maintenance' } : { status: 204 }));
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    await feedEvent(w.workspace.id, { event: 'deal.updated' });
    await webhookJobs();
    // One attempt of the first event only: the second waits behind it.
    expect(rx.received.map((r) => r.json.type)).to.deep.equal(['deal.created']);
    let row = await endpointRow(w.endpoint.id);
    expect(row.attempts).to.equal(1);
    expect(new Date(row.next_attempt_at as Date).toISOString()).to.equal(new Date(clock.nowMs() + RETRY_DELAYS_MS[0]!).toISOString());
    // Not due yet: nothing is sent.
    clock.advance(RETRY_DELAYS_MS[0]! - 1000);
    await webhookJobs();
    expect(rx.received).to.have.length(1);
    clock.advance(1000);
    await webhookJobs();
    expect(rx.received.map((r) => r.json.type)).to.deep.equal(['deal.created', 'deal.created']);
    clock.advance(RETRY_DELAYS_MS[1]!);
    failing = false;
    await webhookJobs();
    expect(rx.received.map((r) => r.json.type)).to.deep.equal(['deal.created', 'deal.created', 'deal.created', 'deal.updated']);
    // Every attempt of one event carries the same webhook-id, each signed anew.
    const ids = rx.received.slice(0, 3).map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).to.equal(1);
    for (const r of rx.received) verified(w.secret, r);
    const log = await deliveries(w.endpoint.id);
    expect(log.map((d: { attempt: number; status: string; response_status: number }) => [d.attempt, d.status, d.response_status])).to.deep.equal([
      [1, 'failed', 503],
      [2, 'failed', 503],
      [3, 'succeeded', 204],
      [1, 'succeeded', 204],
    ]);
    expect(log[0]).to.include({ error: 'HTTP 503', response_excerpt: 'down for maintenance' });
    expect(log[0].next_attempt_at).to.not.equal(null);
    row = await endpointRow(w.endpoint.id);
    expect(row).to.include({ attempts: 0, next_attempt_at: null, lease_until: null, status: 'active' });
    // The dashboard shows the same log, newest first.
    const list = await client.get(`${E}/webhooks/${w.endpoint.id}/deliveries`).set(headersOf(await sessionOf(w.owner)));
    expect(list.status).to.equal(200);
    expect((list.body.data as { attempt: number; status: string }[]).map((d) => [d.attempt, d.status])).to.deep.equal([
      [1, 'succeeded'],
      [3, 'succeeded'],
      [2, 'failed'],
      [1, 'failed'],
    ]);
    expect(list.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 4, total_pages: 1 });
    const failedOnly = await client.get(`${E}/webhooks/${w.endpoint.id}/deliveries?status=failed`).set(headersOf(await sessionOf(w.owner)));
    expect(failedOnly.body.data).to.have.length(2);
  });

  it('disables an endpoint after about three days of failures, e-mails its opted-in admins, then a resume delivers everything in order', async () => {
    const w = await world();
    const viewer = await addMember(w.workspace.id, 'viewer');
    const quietAdmin = await addMember(w.workspace.id, 'admin');
    await db('workspace_members').where({ id: quietAdmin.member.id }).update({ notify_email: false });
    clock.set(new Date('2026-12-01T08:00:00Z'));
    const start = clock.nowMs();
    rx.answer(() => ({ status: 500 }));
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    await feedEvent(w.workspace.id, { event: 'deal.updated' });
    await webhookJobs();
    for (const wait of RETRY_DELAYS_MS) {
      clock.advance(wait);
      await webhookJobs();
    }
    const total = RETRY_DELAYS_MS.reduce((s, x) => s + x, 0);
    expect(total / 3600_000).to.be.within(66, 78); // about three days
    expect(clock.nowMs() - start).to.equal(total);
    expect(rx.received).to.have.length(MAX_ATTEMPTS);
    expect(rx.received.every((r) => r.json.type === 'deal.created')).to.equal(true);
    const row = await endpointRow(w.endpoint.id);
    expect(row.status).to.equal('disabled');
    expect(row.disabled_reason).to.match(/11 attempts .* failed/);
    expect(row.lease_until).to.equal(null);
    const log = await deliveries(w.endpoint.id);
    expect(log.map((d: { attempt: number }) => d.attempt)).to.deep.equal(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1));
    expect(log.at(-1).next_attempt_at).to.equal(null);
    // The event and the e-mail to admins and owners who opted in, not to viewers or an admin who opted out.
    expect(await db('workspace_events').where({ workspace_id: w.workspace.id, event: 'webhook_endpoint.disabled', entity_id: w.endpoint.id })).to.have.length(1);
    const mail = await db('outbound_emails').where({ template: 'enterprise.webhook-disabled' });
    expect(mail.map((m: { user_id: string }) => m.user_id).sort()).to.deep.equal([w.admin.user.id, w.owner.id].sort());
    expect(mail.map((m: { user_id: string }) => m.user_id)).to.not.include.members([viewer.user.id, quietAdmin.user.id]);
    expect(mail[0].subject).to.equal(`Webhook endpoint disabled: 127.0.0.1:${rx.port}`);
    // Disabled: nothing more is sent, even when due.
    clock.advance(24 * 3600_000);
    await webhookJobs();
    expect(rx.received).to.have.length(MAX_ATTEMPTS);
    // The receiver works again; resuming starts the schedule over and sends what was missed, in order.
    rx.answer(() => ({ status: 200 }));
    const res = await client.patch(`${E}/webhooks/${w.endpoint.id}`).set(headersOf(await sessionOf(w.admin.user))).send({ status: 'active' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.include({ status: 'active', disabled_at: null, disabled_reason: null, failed_attempts: 0, next_retry_at: null });
    await webhookJobs();
    expect(rx.received.slice(MAX_ATTEMPTS).map((r) => r.json.type)).to.deep.equal(['deal.created', 'deal.updated', 'webhook_endpoint.disabled', 'webhook_endpoint.resumed']);
  });

  it('a new URL saved while the last attempt is out starts the schedule over instead of disabling the endpoint', async () => {
    const w = await world();
    webhookSettings.timeoutMs = 1000;
    rx.answer(() => 'hang');
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    // Ten attempts already failed: this is the last one.
    await db('webhook_endpoints').where({ id: w.endpoint.id }).update({ attempts: MAX_ATTEMPTS - 1 });
    const running = runEndpoint(w.endpoint.id);
    while (rx.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    const fixed = await startReceiver();
    try {
      const res = await client.patch(`${E}/webhooks/${w.endpoint.id}`).set(headersOf(await sessionOf(w.admin.user))).send({ url: fixed.url });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect((await running).state).to.equal('retry_scheduled');
      const row = await endpointRow(w.endpoint.id);
      expect(row).to.include({ status: 'active', attempts: 1 });
      expect(await db('outbound_emails').where({ template: 'enterprise.webhook-disabled' })).to.have.length(0);
      // The retry goes to the new URL, in order.
      clock.advance(RETRY_DELAYS_MS[0]!);
      await webhookJobs();
      expect(fixed.received.map((r) => r.json.type)).to.deep.equal(['deal.created', 'webhook_endpoint.updated']);
    } finally {
      await fixed.close();
    }
  });

  it('a paused endpoint receives nothing; resumed, it receives what it missed in feed order', async () => {
    const w = await world();
    const s = await sessionOf(w.admin.user);
    expect((await client.patch(`${E}/webhooks/${w.endpoint.id}`).set(headersOf(s)).send({ status: 'paused' })).body.data.status).to.equal('paused');
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    await feedEvent(w.workspace.id, { event: 'deal.updated' });
    await webhookJobs();
    await sweepWebhooks();
    await webhookJobs();
    expect(rx.received).to.have.length(0);
    await client.patch(`${E}/webhooks/${w.endpoint.id}`).set(headersOf(s)).send({ status: 'active' });
    await webhookJobs();
    // The pause itself is an event after the cursor: it comes first.
    expect(rx.received.map((r) => r.json.type)).to.deep.equal(['webhook_endpoint.paused', 'deal.created', 'deal.updated', 'webhook_endpoint.resumed']);
  });

  it('redelivers the same message: same webhook-id and body, signed anew, recorded as a redelivery', async () => {
    const w = await world();
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    await webhookJobs();
    const [first] = await deliveries(w.endpoint.id);
    const s = await sessionOf(w.admin.user);
    clock.advance(60_000);
    const res = await client.post(`${E}/webhooks/${w.endpoint.id}/deliveries/${first.id}/redeliver`).set(headersOf(s)).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    expect(res.body.data).to.include({ kind: 'redelivery', status: 'pending', message_id: first.message_id, event_id: first.event_id, event_type: 'deal.created', attempt: 1 });
    expect(res.body.data.requested_by).to.deep.equal({ id: w.admin.user.id, name: w.admin.user.full_name });
    await webhookJobs();
    expect(rx.received).to.have.length(2);
    const [a, b] = rx.received;
    expect(b!.headers['webhook-id']).to.equal(a!.headers['webhook-id']);
    expect(b!.body).to.equal(a!.body);
    expect(Number(b!.headers['webhook-timestamp'])).to.equal(Number(a!.headers['webhook-timestamp']) + 60);
    verified(w.secret, b!);
    const again = (await deliveries(w.endpoint.id)).find((d: { id: string }) => d.id === res.body.data.id);
    expect(again).to.include({ status: 'succeeded', response_status: 200 });
    // Run twice: sent once.
    await webhookJobs();
    expect(rx.received).to.have.length(2);
    // A redelivery of a delivery of another endpoint, or unknown: 404.
    const other = await world();
    const missing = await client.post(`${E}/webhooks/${w.endpoint.id}/deliveries/${other.endpoint.id}/redeliver`).set(headersOf(s)).send({});
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
  });

  it('webhook.test sends a signed test message to the endpoint alone, whatever its status and filter', async () => {
    const w = await world(['deal.created']);
    const s = await sessionOf(w.admin.user);
    await client.patch(`${E}/webhooks/${w.endpoint.id}`).set(headersOf(s)).send({ status: 'paused' });
    const res = await client.post(`${E}/webhooks/${w.endpoint.id}/test`).set(headersOf(s)).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    expect(res.body.data).to.include({ kind: 'test', event_type: 'webhook.test', status: 'pending', event_id: null, event_seq: null });
    await webhookJobs();
    expect(rx.received).to.have.length(1);
    const payload = verified(w.secret, rx.received[0]!) as { id: string; type: string; livemode: boolean; data: Record<string, unknown> };
    expect(payload).to.include({ type: 'webhook.test', livemode: false, id: res.body.data.message_id });
    expect(payload.data).to.include({ event: 'webhook.test', seq: null, entity_type: 'webhook_endpoint', entity_id: w.endpoint.id, livemode: false });
    expect(payload.data.actor).to.deep.equal({ id: w.admin.user.id, name: w.admin.user.full_name });
    const list = await client.get(`${E}/webhooks/${w.endpoint.id}/deliveries`).set(headersOf(s));
    expect(list.body.data[0]).to.include({ id: res.body.data.id, status: 'succeeded', response_status: 200 });
    // Not a feed event.
    expect(await db('workspace_events').where({ workspace_id: w.workspace.id, event: 'webhook.test' })).to.have.length(0);
  });

  it('a hanging receiver times out without holding the worker, and the answer is read only up to its cap', async () => {
    const w = await world();
    webhookSettings.timeoutMs = 300;
    rx.answer(() => 'hang');
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    const t0 = Date.now();
    await webhookJobs();
    expect(Date.now() - t0).to.be.below(3000);
    const [d] = await deliveries(w.endpoint.id);
    expect(d).to.include({ status: 'failed', response_status: null, error: 'timeout after 300 ms' });
    expect(d.duration_ms).to.be.within(250, 2500);
    // A huge answer: only its first bytes are read and kept.
    rx.answer(() => ({ status: 200, body: 'x'.repeat(5_000_000) }));
    clock.advance(RETRY_DELAYS_MS[0]!);
    await webhookJobs();
    const log = await deliveries(w.endpoint.id);
    expect(log[1]).to.include({ status: 'succeeded', response_status: 200 });
    expect(log[1].response_excerpt).to.have.length(webhookSettings.excerptChars);
  });

  it('a receiver that refuses the connection is a failed attempt with the cause named', async () => {
    const w = await world();
    await rx.close();
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    await webhookJobs();
    const [d] = await deliveries(w.endpoint.id);
    expect(d.status).to.equal('failed');
    expect(d.error).to.match(/ECONNREFUSED/);
    rx = await startReceiver(); // for afterEach
  });

  it('one delivery in flight per endpoint: a second run meanwhile finds the lease and leaves', async () => {
    const w = await world();
    webhookSettings.timeoutMs = 1000;
    rx.answer(() => 'hang');
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    const running = runEndpoint(w.endpoint.id);
    while (rx.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    const [second, third] = await Promise.all([runEndpoint(w.endpoint.id), runEndpoint(w.endpoint.id)]);
    expect([second.state, third.state]).to.deep.equal(['busy', 'busy']);
    const done = await running;
    expect(done).to.include({ failed: 1, state: 'retry_scheduled' });
    expect(rx.received).to.have.length(1);
    expect(await deliveries(w.endpoint.id)).to.have.length(1);
  });

  it('a dead run\'s lease runs out and the next run sends the event again with the same webhook-id', async () => {
    const w = await world();
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    // A run that took the lease and died before sending.
    await db('webhook_endpoints').where({ id: w.endpoint.id }).update({ lease_until: new Date(clock.nowMs() + 25_000), lease_token: '11111111-1111-4111-8111-111111111111' });
    expect((await runEndpoint(w.endpoint.id)).state).to.equal('busy');
    expect((await sweepWebhooks()).nudged).to.equal(0);
    clock.advance(25_000);
    expect((await sweepWebhooks()).nudged).to.equal(1);
    await webhookJobs();
    expect(rx.received.map((r) => r.json.type)).to.deep.equal(['deal.created']);
  });

  it('the sweeper catches a nudge that was lost (its outbox row gone)', async () => {
    const w = await world();
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    const rows = await db('outbox').where({ job: 'webhooks.dispatch' }).delete();
    expect(rows).to.equal(1);
    await webhookJobs();
    expect(rx.received).to.have.length(0);
    const swept = await sweepWebhooks();
    expect(swept.nudged).to.equal(1);
    await webhookJobs();
    expect(rx.received.map((r) => r.json.type)).to.deep.equal(['deal.created']);
    // Nothing left to do: the next sweep nudges nobody.
    expect((await sweepWebhooks()).nudged).to.equal(0);
  });

  it('a workspace without an active endpoint writes no dispatch job; one change with many events writes one', async () => {
    const ws = await createWorkspace();
    await feedEvent(ws.workspace.id, { event: 'deal.created' });
    expect(await db('outbox').where({ job: 'webhooks.dispatch' })).to.have.length(0);
    const w = await world();
    const before = (await db('outbox').where({ job: 'webhooks.dispatch' })).length;
    await db.transaction(async (trx) => {
      for (let i = 0; i < 5; i += 1) await appendEvent(trx, w.workspace.id, { event: 'disbursement.queued', entityType: 'disbursement', summary: `payout ${i}` });
    });
    expect((await db('outbox').where({ job: 'webhooks.dispatch' })).length - before).to.equal(1);
    await webhookJobs();
    expect(rx.received).to.have.length(5);
  });

  it('purges delivery records older than 30 days', async () => {
    const w = await world();
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    await webhookJobs();
    clock.advance(31 * 24 * 3600_000);
    await feedEvent(w.workspace.id, { event: 'deal.updated' });
    await webhookJobs();
    expect(await deliveries(w.endpoint.id)).to.have.length(2);
    expect((await sweepWebhooks()).purged).to.equal(1);
    expect((await deliveries(w.endpoint.id)).map((d: { event_type: string }) => d.event_type)).to.deep.equal(['deal.updated']);
  });

  it('one sweep purges every expired delivery record, a batch per statement', async () => {
    const w = await world();
    for (let i = 0; i < 5; i += 1) await feedEvent(w.workspace.id, { event: 'deal.created' });
    await webhookJobs();
    clock.advance(31 * 24 * 3600_000);
    await feedEvent(w.workspace.id, { event: 'deal.updated' });
    await webhookJobs();
    expect(await deliveries(w.endpoint.id)).to.have.length(6);
    const batch = webhookSettings.purgeBatch;
    webhookSettings.purgeBatch = 2;
    try {
      expect((await sweepWebhooks()).purged).to.equal(5);
    } finally {
      webhookSettings.purgeBatch = batch;
    }
    expect((await deliveries(w.endpoint.id)).map((d: { event_type: string }) => d.event_type)).to.deep.equal(['deal.updated']);
  });
});

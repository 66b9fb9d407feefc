/**
 * One workspace cannot hold every webhook worker (review R2; decision 0020 addendum): its
 * tests and redeliveries are sent at most `oneOffsPerWorkspace` at a time. Another one waits,
 * still pending, re-queued through the outbox, and frees its worker slot; another workspace's
 * is sent at once. A lease of a dead worker runs out. Connecting has its own shorter deadline.
 */
import net from 'node:net';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.js';
import { addMember, createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import { actorOf, makeEndpoint } from '../../factories/webhooks.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { redis } from '../../../shared/redis.js';
import { sendOnce } from '../../../shared/webhooks/delivery.js';
import { webhookSettings } from '../../../shared/webhooks/settings.js';
import { attempt } from '../../../shared/webhooks/transport.js';

const E = '/v1/enterprise';

describe('webhooks: one workspace cannot take every worker (review R2)', function () {
  this.timeout(20_000);
  const client = api();
  let rx: Receiver;

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T08:00:00Z'));
    rx = await startReceiver();
  });
  afterEach(() => rx.close());

  async function testDelivery() {
    const ws = await createWorkspace();
    const admin = await addMember(ws.workspace.id, 'admin');
    const { endpoint } = await makeEndpoint(actorOf(ws.workspace.id, admin), { url: rx.url, events: ['*'] });
    const res = await client.post(`${E}/webhooks/${endpoint.id}/test`).set(headersOf(await sessionOf(admin.user))).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return { workspaceId: ws.workspace.id, deliveryId: res.body.data.id as string };
  }
  const statusOf = async (id: string) => (await db('webhook_deliveries').where({ id }).first<{ status: string }>('status')).status;
  const key = (ws: string) => `webhooks:one-offs:${ws}`;

  it('with its slots taken, a workspace waits (pending, re-queued, slot freed) while another workspace is sent at once', async () => {
    const a = await testDelivery();
    const b = await testDelivery();
    // Two of A's sends in flight (leases running out 20 s from now).
    const until = clock.nowMs() + 20_000;
    await redis.zadd(key(a.workspaceId), String(until), 'x1', String(until), 'x2');
    const deferredBefore = await db('outbox').where({ job: 'webhooks.send-once' }).whereRaw("payload->>'delivery_id' = ?", [a.deliveryId]).count<{ n: string }[]>('* as n');
    expect(await sendOnce(a.deliveryId)).to.deep.equal({ outcome: 'deferred', delivery_id: a.deliveryId });
    expect(await statusOf(a.deliveryId)).to.equal('pending');
    const again = await db('outbox').where({ job: 'webhooks.send-once' }).whereRaw("payload->>'delivery_id' = ?", [a.deliveryId]).orderBy('id', 'desc').first<{ available_at: Date }>('available_at');
    expect(Number((await db('outbox').where({ job: 'webhooks.send-once' }).whereRaw("payload->>'delivery_id' = ?", [a.deliveryId]).count<{ n: string }[]>('* as n'))[0]!.n)).to.equal(Number(deferredBefore[0]!.n) + 1);
    expect(again.available_at.getTime()).to.be.within(clock.nowMs() + webhookSettings.oneOffWaitMs, clock.nowMs() + 2 * webhookSettings.oneOffWaitMs);
    expect(rx.received).to.have.length(0);
    // B is another workspace: sent now.
    expect(await sendOnce(b.deliveryId)).to.include({ outcome: 'succeeded' });
    expect(rx.received).to.have.length(1);
    // A's own slot was not kept by the deferred try.
    expect(await redis.zrange(key(a.workspaceId), '0', '-1')).to.deep.equal(['x1', 'x2']);
    // One lease ends: A is sent, and its slot given back.
    await redis.zrem(key(a.workspaceId), 'x2');
    expect(await sendOnce(a.deliveryId)).to.include({ outcome: 'succeeded' });
    expect(await redis.zrange(key(a.workspaceId), '0', '-1')).to.deep.equal(['x1']);
  });

  it("a dead worker's lease runs out: once past it, it takes no slot", async () => {
    const a = await testDelivery();
    const past = clock.nowMs() - 1;
    await redis.zadd(key(a.workspaceId), String(past), 'dead1', String(past), 'dead2');
    expect(await sendOnce(a.deliveryId)).to.include({ outcome: 'succeeded' });
    expect(await redis.zcard(key(a.workspaceId))).to.equal(0);
  });

  it('connecting (TCP and the TLS handshake) ends after the connect timeout, sooner than the whole attempt', async () => {
    // Accepts TCP and never says a word: the TLS handshake never completes.
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const r = await attempt({ url: `https://127.0.0.1:${port}/`, headers: {}, body: '{}', timeoutMs: 5_000, connectTimeoutMs: 300, capBytes: 100, allowLoopback: true });
      expect(r).to.include({ ok: false, status: null, error: 'connect timeout after 300 ms' });
      expect(r.durationMs).to.be.within(250, 2_000);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
    }
  });
});

/**
 * GET /v1/notifications/stream (consumer spec 6, 8) over real HTTP: two API copies on
 * loopback sharing Redis, a worker-created notice reaching a stream on the other copy
 * within a second, eviction of the oldest of six, ping and the 10-minute end driven by the
 * clock, 503 STREAM_UNAVAILABLE and 429 as JSON before any stream starts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createApp } from '../../../api/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { openStream as open, type Sse } from '../../helpers/sse.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import * as escrows from '../../../shared/escrows/service.js';
import { streamSettings } from '../../../shared/notifications/settings.js';
import { shutdownStreamHubs } from '../../../shared/notifications/streams.js';
import { createRedis } from '../../../shared/redis.js';

async function listen(redis: Redis): Promise<{ server: Server; port: number }> {
  const handle = createApp({ redis }).callback();
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('notifications: the event stream', function () {
  this.timeout(20_000);
  const saved = { ...streamSettings };
  let redisA: Redis;
  let redisB: Redis;
  let a: { server: Server; port: number };
  let b: { server: Server; port: number };
  const opened: Sse[] = [];
  const track = (s: Sse) => (opened.push(s), s);

  beforeEach(async () => {
    Object.assign(streamSettings, saved, { tickMs: 20 });
    redisA = createRedis();
    redisB = createRedis();
    a = await listen(redisA);
    b = await listen(redisB);
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) s.close();
    await shutdownStreamHubs();
    a.server.closeAllConnections();
    b.server.closeAllConnections();
    await Promise.all([a, b].map(({ server }) => new Promise<void>((r) => void server.close(() => r()))));
    redisA.disconnect();
    redisB.disconnect();
    Object.assign(streamSettings, saved);
  });

  it('starts with retry and the unread count; a worker-made notice and a read mark on copy A reach copy B within a second', async () => {
    const { user: buyer } = await createUser();
    const key = await issueKey(buyer.id);
    const { escrow } = await createEscrow({ buyer });
    await runJobs();
    const s = track(await open(b.port, key));
    expect(s.status).to.equal(200);
    expect(s.type).to.equal('text/event-stream');
    await s.waitFor('event: unread\ndata: {"count":0}\n\n');
    expect(s.text().startsWith('retry: 5000\n\n')).to.equal(true);

    await escrows.markPaid(undefined, escrow.id, { reference: 'stream-test' });
    const started = Date.now();
    await runJobs(); // the notifications worker's code path writes and publishes
    await s.waitFor('event: unread\ndata: {"count":1}\n\n', 0, 1000);
    expect(Date.now() - started).to.be.lessThan(2000);

    // Read through copy A: B's stream hears the new count.
    const list = await fetch(`http://127.0.0.1:${a.port}/v1/notifications`, { headers: { Authorization: `Bearer ${key}` } });
    const id = ((await list.json()) as { data: { id: string }[] }).data[0]!.id;
    const at = s.text().length;
    const marked = await fetch(`http://127.0.0.1:${a.port}/v1/notifications/${id}/read`, { method: 'PATCH', headers: { Authorization: `Bearer ${key}` } });
    expect(marked.status).to.equal(200);
    await s.waitFor('event: unread\ndata: {"count":0}\n\n', at, 1000);
  });

  it('a sixth stream of one user on one server evicts the oldest; other users and other servers are untouched', async () => {
    const { user } = await createUser();
    const { user: other } = await createUser();
    const key = await issueKey(user.id);
    const streams: Sse[] = [];
    for (let i = 0; i < 5; i += 1) {
      const s = track(await open(a.port, key));
      await s.waitFor('event: unread');
      streams.push(s);
    }
    const elsewhere = track(await open(b.port, key));
    const otherUser = track(await open(a.port, await issueKey(other.id)));
    await elsewhere.waitFor('event: unread');
    await otherUser.waitFor('event: unread');
    const sixth = track(await open(a.port, key));
    await sixth.waitFor('event: unread');
    await streams[0]!.waitFor('event: evicted\ndata: {}\n\n');
    await new Promise((r) => setTimeout(r, 50));
    expect(streams[0]!.ended()).to.equal(true);
    for (const s of [...streams.slice(1), sixth, elsewhere, otherUser]) {
      expect(s.text()).not.to.contain('evicted');
      expect(s.ended()).to.equal(false);
    }
  });

  it('pings every 25 s and ends after 10 minutes, on the service clock', async () => {
    const { user } = await createUser();
    const key = await issueKey(user.id);
    clock.set(new Date('2026-12-01T00:00:00.000Z'));
    const s = track(await open(a.port, key));
    await s.waitFor('event: unread');
    clock.advance(24_000);
    await new Promise((r) => setTimeout(r, 80));
    expect(s.text()).not.to.contain(': ping');
    clock.advance(1_000);
    const first = await s.waitFor(': ping\n\n');
    clock.advance(25_000);
    await s.waitFor(': ping\n\n', first + 1);
    clock.advance(10 * 60_000 - 50_000 - 1); // 1 ms short of 10 minutes
    await new Promise((r) => setTimeout(r, 80));
    expect(s.ended()).to.equal(false);
    clock.advance(1);
    await new Promise((r) => setTimeout(r, 150));
    expect(s.ended()).to.equal(true);
  });

  it('answers JSON errors before the stream: 401, 503 STREAM_UNAVAILABLE at the server maximum, 429 after 30 attempts a minute', async () => {
    const anonymous = await fetch(`http://127.0.0.1:${a.port}/v1/notifications/stream`);
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers.get('content-type')).to.match(/application\/json/);

    streamSettings.maxOpen = 1;
    const { user } = await createUser();
    const { user: second } = await createUser();
    const first = track(await open(a.port, await issueKey(user.id)));
    await first.waitFor('event: unread');
    const secondKey = await issueKey(second.id);
    const full = await open(a.port, secondKey);
    expect(full.status).to.equal(503);
    expect((await full.json()).error?.code).to.equal('STREAM_UNAVAILABLE');
    // Copy B holds none: it still opens.
    const onB = track(await open(b.port, secondKey));
    expect(onB.status).to.equal(200);

    streamSettings.maxOpen = 0;
    for (let i = 2; i < 30; i += 1) expect((await open(a.port, secondKey)).status).to.equal(503);
    const limited = await open(a.port, secondKey);
    expect(limited.status).to.equal(429);
    expect((await limited.json()).error?.code).to.equal('RATE_LIMITED');
  });
});

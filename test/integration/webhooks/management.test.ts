/**
 * Webhook management routes (enterprise spec 4.11, section 5 rule 2, section 8; D8;
 * decision 0020 "Webhooks"): create answers the `whsec_` secret once and stores it sealed;
 * lists, answers and logs never show it again; the URL rules (https, loopback http only in
 * sandbox mode, no literal private address, no credentials); event filters; PATCH updates,
 * pauses and resumes (a disabled endpoint is resumed, not paused); delete; rotate-secret;
 * roles (viewer reads, admin writes from the dashboard only: keys 403 KEY_NOT_ALLOWED);
 * 60 per minute; 20 endpoints per workspace, also under parallel creation; Idempotency-Key
 * on PATCH, DELETE, test and redeliver but never on create and rotate-secret (no secret in
 * the idempotency table); another workspace's ids answer 404; every change its event.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { api } from '../../helpers/app.js';
import { captureLogs } from '../../helpers/auth-account-support.js';
import { runJobs } from '../../helpers/jobs.js';
import { startReceiver, verified, type Receiver } from '../../helpers/webhook-receiver.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { actorOf, feedEvent, makeEndpoint } from '../../factories/webhooks.js';
import { routers } from '../../../api/app.js';
import { isIdempotentMiddleware } from '../../../api/middleware/idempotency.js';
import { LIMITS } from '../../../api/routes/enterprise-webhooks.js';
import { config } from '../../../shared/config.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { webhookSettings } from '../../../shared/webhooks/settings.js';

const E = '/v1/enterprise';
const W = `${E}/webhooks`;

describe('webhook management routes', function () {
  this.timeout(20_000);
  const client = api();
  let rx: Receiver;

  before(async () => {
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
  });

  async function world() {
    const ws = await createWorkspace();
    const admin = await addMember(ws.workspace.id, 'admin');
    const session = await sessionOf(admin.user);
    return { ...ws, admin, session, actor: actorOf(ws.workspace.id, admin) };
  }

  const create = (cred: Cred, body: Record<string, unknown>, headers: Record<string, string> = {}) => client.post(W).set(headersOf(cred)).set(headers).send(body);

  it('creates an endpoint: the whsec_ secret is answered once, stored sealed, and never answered or logged again', async () => {
    const w = await world();
    const { result: res, text: logs } = await captureLogs(async () => {
      const made = await create(w.session, { url: rx.url, events: ['deal.created', 'milestone.released'], description: 'ERP' });
      await feedEvent(w.workspace.id, { event: 'deal.created' });
      await runJobs(['webhooks']);
      return made;
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const e = res.body.data;
    expect(e.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from((e.secret as string).slice(6), 'base64')).to.have.length(32);
    expect(e).to.include({ url: rx.url, description: 'ERP', status: 'active', disabled_at: null, failed_attempts: 0, next_retry_at: null });
    expect(e.events).to.deep.equal(['deal.created', 'milestone.released']);
    expect(e.created_by).to.deep.equal({ id: w.admin.user.id, name: w.admin.user.full_name });
    const row = await db('webhook_endpoints').where({ id: e.id }).first();
    expect(row.secret_sealed).to.not.include((e.secret as string).slice(6));
    expect(decryptSecret(row.secret_sealed as string)).to.equal(e.secret);
    // The secret signs the deliveries.
    expect(rx.received.length).to.be.greaterThan(0);
    verified(e.secret as string, rx.received.at(-1)!);
    // Never again: lists, the feed, delivery answers, logs.
    const secretBody = (e.secret as string).slice(6);
    const list = await client.get(W).set(headersOf(w.session));
    expect(list.status).to.equal(200);
    expect(list.body.data).to.have.length(1);
    expect(list.body.data[0]).to.not.have.property('secret');
    const moving = ['secret', 'delivered_through_seq', 'updated_at'];
    const still = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => !moving.includes(k)));
    expect(still(list.body.data[0] as Record<string, unknown>)).to.deep.equal(still(e as Record<string, unknown>));
    const feed = await client.get(`${E}/events?limit=100`).set(headersOf(w.session));
    const deliveries = await client.get(`${W}/${e.id}/deliveries`).set(headersOf(w.session));
    for (const text of [JSON.stringify(list.body), JSON.stringify(feed.body), JSON.stringify(deliveries.body), logs]) {
      expect(text).to.not.include(secretBody);
      expect(text).to.not.include(row.secret_sealed as string);
    }
    expect(await db('workspace_events').where({ workspace_id: w.workspace.id, event: 'webhook_endpoint.created', entity_id: e.id })).to.have.length(1);
  });

  it('create and rotate-secret take no Idempotency-Key: a retry makes another secret, and no secret reaches the idempotency table', async () => {
    const w = await world();
    const key = randomUUID();
    const a = await create(w.session, { url: rx.url, events: ['*'] }, { 'Idempotency-Key': key });
    const b = await create(w.session, { url: rx.url, events: ['*'] }, { 'Idempotency-Key': key });
    expect([a.status, b.status]).to.deep.equal([201, 201]);
    expect(a.body.data.id).to.not.equal(b.body.data.id);
    expect(b.headers['idempotent-replay']).to.equal(undefined);
    const r1 = await client.post(`${W}/${a.body.data.id}/rotate-secret`).set(headersOf(w.session)).set('Idempotency-Key', key).send({});
    const r2 = await client.post(`${W}/${a.body.data.id}/rotate-secret`).set(headersOf(w.session)).set('Idempotency-Key', key).send({});
    expect(r1.body.data.secret).to.not.equal(r2.body.data.secret);
    const stored = JSON.stringify(await db('idempotency_keys').select('*'));
    for (const s of [a.body.data.secret, b.body.data.secret, r1.body.data.secret, r2.body.data.secret] as string[]) expect(stored).to.not.include(s.slice(6));
    // The routes themselves carry no idempotent() middleware.
    const keyed = new Set<string>();
    for (const router of routers) {
      for (const layer of router.stack) {
        if (layer.stack.some((fn) => isIdempotentMiddleware(fn))) for (const m of layer.methods) keyed.add(`${m} ${String(layer.path)}`);
      }
    }
    expect(keyed).to.not.include(`POST ${W}`);
    expect(keyed).to.not.include(`POST ${W}/:id/rotate-secret`);
    for (const r of [`PATCH ${W}/:id`, `DELETE ${W}/:id`, `POST ${W}/:id/test`, `POST ${W}/:id/deliveries/:did/redeliver`]) expect(keyed).to.include(r);
  });

  it('rotate-secret: a new secret, answered once; the next delivery is signed with it and not with the old one', async () => {
    const w = await world();
    const made = await makeEndpoint(w.actor, { url: rx.url });
    const res = await client.post(`${W}/${made.endpoint.id}/rotate-secret`).set(headersOf(w.session)).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const fresh = res.body.data.secret as string;
    expect(fresh).to.match(/^whsec_/).and.not.equal(made.secret);
    expect(res.body.data.id).to.equal(made.endpoint.id);
    const before = rx.received.length;
    await feedEvent(w.workspace.id, { event: 'deal.created' });
    await runJobs(['webhooks']);
    const got = rx.received.slice(before);
    expect(got.map((r) => r.json.type)).to.deep.equal(['webhook_endpoint.secret_rotated', 'deal.created']);
    for (const r of got) {
      verified(fresh, r);
      expect(() => verified(made.secret, r)).to.throw(/No matching signature/);
    }
    expect(await db('workspace_events').where({ workspace_id: w.workspace.id, event: 'webhook_endpoint.secret_rotated' })).to.have.length(1);
  });

  describe('URL and event rules (400 INVALID_BODY on the field)', () => {
    const refusedEverywhere = [
      'ftp://hooks.example.com/x',
      'not a url',
      'https://user:pass@hooks.example.com/x',
      'https://10.0.0.8/hook',
      'https://192.168.1.10/hook',
      'https://172.16.5.4/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://[fd00:ec2::254]/hook',
      'https://[fe80::1]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://0.0.0.0/hook',
      'http://hooks.example.com/hook',
      'http://10.0.0.8/hook',
    ];

    it('in sandbox mode: https anywhere public, http only to loopback; private literals refused', async () => {
      const w = await world();
      expect(config.sandboxMode).to.equal(true);
      for (const url of refusedEverywhere) {
        const res = await create(w.session, { url, events: ['*'] });
        expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(Object.keys(res.body.error.details.fieldErrors as object)).to.deep.equal(['url']);
      }
      for (const url of ['https://hooks.example.com/x?token=1', 'http://127.0.0.1:9/x', 'http://localhost:9/x', 'https://[::1]:9/x', 'https://8.8.8.8/hook']) {
        const res = await create(w.session, { url, events: ['*'] });
        expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.equal(201);
      }
      expect(await db('webhook_endpoints').where({ workspace_id: w.workspace.id })).to.have.length(5);
    });

    it('outside sandbox mode: https only, and loopback refused too', async () => {
      const w = await world();
      const saved = config.sandboxMode;
      config.sandboxMode = false;
      try {
        for (const url of [...refusedEverywhere, 'http://127.0.0.1:9/x', 'http://localhost:9/x', 'https://127.0.0.1/x', 'https://localhost/x', 'https://[::1]/x']) {
          const res = await create(w.session, { url, events: ['*'] });
          expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.equal(400);
          expect(res.body.error.details.fieldErrors).to.have.property('url');
        }
        expect((await create(w.session, { url: 'https://hooks.example.com/x', events: ['*'] })).status).to.equal(201);
        // A PATCH is held to the same rules.
        const [row] = await db('webhook_endpoints').where({ workspace_id: w.workspace.id });
        const patch = await client.patch(`${W}/${row.id}`).set(headersOf(w.session)).send({ url: 'https://169.254.169.254/x' });
        expect([patch.status, Object.keys(patch.body.error.details.fieldErrors as object)]).to.deep.equal([400, ['url']]);
      } finally {
        config.sandboxMode = saved;
      }
    });

    it('events: names or * alone, at least one, no repeats', async () => {
      const w = await world();
      for (const events of [[], ['*', 'deal.created'], ['Deal Created'], ['deal'], ['deal.created', 'deal.created'], 'deal.created', undefined]) {
        const res = await create(w.session, { url: rx.url, events });
        expect(res.status, JSON.stringify(events)).to.equal(400);
        expect(Object.keys(res.body.error.details.fieldErrors as object).every((k) => k.startsWith('events')), JSON.stringify(res.body)).to.equal(true);
      }
      const long = await create(w.session, { url: rx.url, events: ['*'], description: 'x'.repeat(501) });
      expect(long.body.error.details.fieldErrors).to.have.property('description');
      expect((await create(w.session, { url: rx.url, events: ['deal.created', 'webhook_endpoint.disabled'] })).status).to.equal(201);
    });
  });

  it('PATCH changes url, events and description, pauses and resumes, each with its event; a disabled endpoint is resumed, not paused', async () => {
    const w = await world();
    const made = await makeEndpoint(w.actor, { url: rx.url, description: 'old' });
    const id = made.endpoint.id;
    const patch = (body: Record<string, unknown>) => client.patch(`${W}/${id}`).set(headersOf(w.session)).send(body);
    const a = await patch({ events: ['deal.created'], description: '' });
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(a.body.data).to.include({ description: null, status: 'active' });
    expect(a.body.data.events).to.deep.equal(['deal.created']);
    expect(a.body.data).to.not.have.property('secret');
    expect((await patch({ status: 'paused' })).body.data.status).to.equal('paused');
    expect((await patch({ status: 'paused' })).body.data.status).to.equal('paused');
    expect((await patch({ status: 'active' })).body.data.status).to.equal('active');
    // Nothing changes: no event.
    expect((await patch({ description: null })).status).to.equal(200);
    const names = (await db('workspace_events').where({ workspace_id: w.workspace.id, entity_id: id }).orderBy('seq')).map((e: { event: string }) => e.event);
    expect(names).to.deep.equal(['webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.paused', 'webhook_endpoint.resumed']);
    await db('webhook_endpoints').where({ id }).update({ status: 'disabled', disabled_at: new Date(), disabled_reason: 'failed' });
    const refused = await patch({ status: 'paused' });
    expect([refused.status, refused.body.error.code]).to.deep.equal([409, 'INVALID_STATE']);
    const resumed = await patch({ status: 'active' });
    expect(resumed.body.data).to.include({ status: 'active', disabled_at: null, disabled_reason: null });
    for (const bad of [{}, { status: 'disabled' }, { url: 'https://10.0.0.1/x' }, { events: [] }]) {
      const res = await patch(bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
    }
  });

  it('PATCH, DELETE, test and redeliver honour Idempotency-Key (replay, 422 on another body)', async () => {
    const w = await world();
    const made = await makeEndpoint(w.actor, { url: rx.url });
    const key = randomUUID();
    const first = await client.patch(`${W}/${made.endpoint.id}`).set(headersOf(w.session)).set('Idempotency-Key', key).send({ description: 'one' });
    const again = await client.patch(`${W}/${made.endpoint.id}`).set(headersOf(w.session)).set('Idempotency-Key', key).send({ description: 'one' });
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    const other = await client.patch(`${W}/${made.endpoint.id}`).set(headersOf(w.session)).set('Idempotency-Key', key).send({ description: 'two' });
    expect([other.status, other.body.error.code]).to.deep.equal([422, 'IDEMPOTENCY_KEY_CONFLICT']);
    const tkey = randomUUID();
    const t1 = await client.post(`${W}/${made.endpoint.id}/test`).set(headersOf(w.session)).set('Idempotency-Key', tkey).send({});
    const t2 = await client.post(`${W}/${made.endpoint.id}/test`).set(headersOf(w.session)).set('Idempotency-Key', tkey).send({});
    expect([t1.status, t2.status, t2.headers['idempotent-replay']]).to.deep.equal([202, 202, 'true']);
    expect(await db('webhook_deliveries').where({ endpoint_id: made.endpoint.id, kind: 'test' })).to.have.length(1);
    const rkey = randomUUID();
    const r1 = await client.post(`${W}/${made.endpoint.id}/deliveries/${t1.body.data.id}/redeliver`).set(headersOf(w.session)).set('Idempotency-Key', rkey).send({});
    const r2 = await client.post(`${W}/${made.endpoint.id}/deliveries/${t1.body.data.id}/redeliver`).set(headersOf(w.session)).set('Idempotency-Key', rkey).send({});
    expect([r1.status, r2.headers['idempotent-replay'], r2.body.data.id]).to.deep.equal([202, 'true', r1.body.data.id]);
    const dkey = randomUUID();
    const d1 = await client.delete(`${W}/${made.endpoint.id}`).set(headersOf(w.session)).set('Idempotency-Key', dkey);
    const d2 = await client.delete(`${W}/${made.endpoint.id}`).set(headersOf(w.session)).set('Idempotency-Key', dkey);
    expect(d1.body.data).to.deep.equal({ id: made.endpoint.id, deleted: true });
    expect([d2.status, d2.headers['idempotent-replay']]).to.deep.equal([200, 'true']);
    const d3 = await client.delete(`${W}/${made.endpoint.id}`).set(headersOf(w.session));
    expect([d3.status, d3.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    // Its deliveries went with it; one deleted event.
    expect(await db('webhook_deliveries').where({ endpoint_id: made.endpoint.id })).to.have.length(0);
    expect(await db('workspace_events').where({ workspace_id: w.workspace.id, event: 'webhook_endpoint.deleted' })).to.have.length(1);
  });

  it('roles: viewers read endpoints and deliveries; only admins write, from the dashboard; keys of both kinds 403 KEY_NOT_ALLOWED on writes', async () => {
    const w = await world();
    const made = await makeEndpoint(w.actor, { url: rx.url });
    const viewer = await addMember(w.workspace.id, 'viewer');
    const finance = await addMember(w.workspace.id, 'finance');
    const vs = await sessionOf(viewer.user);
    expect((await client.get(W).set(headersOf(vs))).status).to.equal(200);
    expect((await client.get(`${W}/${made.endpoint.id}/deliveries`).set(headersOf(vs))).status).to.equal(200);
    const readKey = { kind: 'workspace_key' as const, key: (await workspaceKey(w.workspace.id, viewer, ['read'])).key };
    expect((await client.get(W).set(headersOf(readKey))).status).to.equal(200);
    const fs = await sessionOf(finance.user);
    const forbidden = await create(fs, { url: rx.url, events: ['*'] });
    expect([forbidden.status, forbidden.body.error.code]).to.deep.equal([403, 'FORBIDDEN']);
    const rwKey = { kind: 'workspace_key' as const, key: (await workspaceKey(w.workspace.id, w.admin, ['read', 'write'])).key };
    for (const cred of [rwKey, await personalKeyOf(w.admin.user)]) {
      const attempts = [
        client.post(W).set(headersOf(cred)).send({ url: rx.url, events: ['*'] }),
        client.patch(`${W}/${made.endpoint.id}`).set(headersOf(cred)).send({ status: 'paused' }),
        client.delete(`${W}/${made.endpoint.id}`).set(headersOf(cred)),
        client.post(`${W}/${made.endpoint.id}/rotate-secret`).set(headersOf(cred)).send({}),
        client.post(`${W}/${made.endpoint.id}/test`).set(headersOf(cred)).send({}),
        client.post(`${W}/${made.endpoint.id}/deliveries/${randomUUID()}/redeliver`).set(headersOf(cred)).send({}),
      ];
      for (const res of await Promise.all(attempts)) expect([res.status, res.body.error.code]).to.deep.equal([403, 'KEY_NOT_ALLOWED']);
      expect((await client.get(W).set(headersOf(cred))).status).to.equal(200);
    }
    expect((await db('webhook_endpoints').where({ id: made.endpoint.id }).first()).status).to.equal('active');
  });

  it('60 requests per minute per user across the webhook routes (429 RATE_LIMITED with Retry-After)', async () => {
    const w = await world();
    expect(LIMITS.webhooks.points).to.equal(60);
    for (let i = 0; i < 60; i += 1) expect((await client.get(W).set(headersOf(w.session))).status).to.equal(200);
    const over = await create(w.session, { url: rx.url, events: ['*'] });
    expect([over.status, over.body.error.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(Number(over.headers['retry-after'])).to.be.greaterThan(0);
    expect(await db('webhook_endpoints').where({ workspace_id: w.workspace.id })).to.have.length(0);
  });

  it('409 WEBHOOK_LIMIT at 20 endpoints; parallel creations never pass it; deleting frees a slot', async () => {
    const w = await world();
    for (let i = 0; i < webhookSettings.endpointsPerWorkspace - 2; i += 1) await makeEndpoint(w.actor, { url: rx.url });
    const racing = await Promise.all([0, 1, 2, 3, 4].map(() => create(w.session, { url: rx.url, events: ['*'] })));
    expect(racing.filter((r) => r.status === 201)).to.have.length(2);
    for (const r of racing.filter((x) => x.status !== 201)) expect([r.status, r.body.error.code]).to.deep.equal([409, 'WEBHOOK_LIMIT']);
    expect(await db('webhook_endpoints').where({ workspace_id: w.workspace.id })).to.have.length(20);
    const one = racing.find((r) => r.status === 201)!.body.data.id as string;
    expect((await client.delete(`${W}/${one}`).set(headersOf(w.session))).status).to.equal(200);
    expect((await create(w.session, { url: rx.url, events: ['*'] })).status).to.equal(201);
  });

  it("another workspace's endpoints and deliveries answer 404 NOT_FOUND on every route and stay unchanged", async () => {
    const a = await world();
    const b = await world();
    const bMade = await makeEndpoint(b.actor, { url: rx.url, description: 'B secret receiver' });
    await feedEvent(b.workspace.id, { event: 'deal.created' });
    await runJobs(['webhooks']);
    const bDelivery = (await db('webhook_deliveries').where({ endpoint_id: bMade.endpoint.id }).first()) as { id: string };
    const before = { e: await db('webhook_endpoints').where({ id: bMade.endpoint.id }).first(), d: await db('webhook_deliveries').where({ endpoint_id: bMade.endpoint.id }) };
    const id = bMade.endpoint.id;
    const s = headersOf(a.session);
    const attempts = [
      client.patch(`${W}/${id}`).set(s).send({ status: 'paused' }),
      client.delete(`${W}/${id}`).set(s),
      client.post(`${W}/${id}/rotate-secret`).set(s).send({}),
      client.post(`${W}/${id}/test`).set(s).send({}),
      client.get(`${W}/${id}/deliveries`).set(s),
      client.post(`${W}/${id}/deliveries/${bDelivery.id}/redeliver`).set(s).send({}),
      client.patch(`${W}/not-a-uuid`).set(s).send({ status: 'paused' }),
      client.get(`${W}/not-a-uuid/deliveries`).set(s),
    ];
    for (const res of await Promise.all(attempts)) {
      expect([res.status, res.body.error.code], JSON.stringify(res.body)).to.deep.equal([404, 'NOT_FOUND']);
      expect(JSON.stringify(res.body)).to.not.include('B secret receiver');
    }
    // A's own endpoint with B's delivery id: 404 too.
    const aMade = await makeEndpoint(a.actor, { url: rx.url });
    const mixed = await client.post(`${W}/${aMade.endpoint.id}/deliveries/${bDelivery.id}/redeliver`).set(s).send({});
    expect([mixed.status, mixed.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    const list = await client.get(W).set(s);
    expect(JSON.stringify(list.body)).to.not.include(id);
    expect({ e: await db('webhook_endpoints').where({ id }).first(), d: await db('webhook_deliveries').where({ endpoint_id: id }) }).to.deep.equal(before);
  });

  it('the list is paginated, newest first', async () => {
    const w = await world();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      ids.push((await makeEndpoint(w.actor, { url: rx.url, description: `n${i}` })).endpoint.id);
      await new Promise((r) => setTimeout(r, 5));
    }
    const page = await client.get(`${W}?limit=2`).set(headersOf(w.session));
    expect(page.body.pagination).to.deep.equal({ page: 1, limit: 2, total: 3, total_pages: 2 });
    expect((page.body.data as { description: string }[]).map((e) => e.description)).to.deep.equal(['n2', 'n1']);
    const bad = await client.get(`${W}?limit=51`).set(headersOf(w.session));
    expect([bad.status, bad.body.error.code]).to.deep.equal([400, 'INVALID_QUERY']);
  });

  it('the standardwebhooks package accepts the secret format', () => {
    // whsec_ + base64: the package strips the prefix and decodes the rest.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`)).to.not.throw();
  });
});

/**
 * Enterprise spec section 1: every answer under /v1/enterprise and /v1/kyb carries
 * `Cache-Control: private, no-store`, the ones refused before any route runs included (a
 * malformed, oversized or undecodable body, an unknown path or method, a refused
 * credential, a limit), and errors the error renderer makes from unknown failures. The
 * request frame sets it (api/middleware/request-context.ts, security-headers.ts); other
 * paths keep the platform's plain `no-store`.
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { createRouter } from '../../../api/context.js';
import { createUser } from '../../factories/users.js';
import { createWorkspace, headersOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';

const MiB = 1024 * 1024;
const PRIVATE = 'private, no-store';

/** Probe routes under the enterprise prefix: an unknown failure (500) and a route that tries to allow caching. */
const probe = createRouter();
probe.get('/v1/enterprise/__probe/boom', () => {
  throw new Error('boom');
});
probe.get('/v1/enterprise/__probe/cacheable', (ctx) => {
  ctx.set('Cache-Control', 'public, max-age=600');
  ctx.body = { success: true, data: {} };
});

const client = api({ extraRouters: [probe] });

function expectPrivate(res: Response, label: string, status: number, code?: string): void {
  expect(res.status, `${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`).to.equal(status);
  if (code) expect(res.body.error?.code, label).to.equal(code);
  expect(res.headers['cache-control'], label).to.equal(PRIVATE);
}

describe('enterprise: Cache-Control private, no-store on every answer (spec section 1)', () => {
  it('a success, a route that sets another value, and an unknown failure (500) all answer private, no-store', async () => {
    const w = await createWorkspace();
    const h = headersOf(await sessionOf(w.owner));
    expectPrivate(await client.get('/v1/enterprise/settings').set(h), 'success', 200);
    expectPrivate(await client.head('/v1/enterprise/settings').set(h), 'HEAD of a GET route', 200);
    expectPrivate(await client.get('/v1/enterprise/__probe/cacheable'), 'route that sets public caching', 200);
    expectPrivate(await client.get('/v1/enterprise/__probe/boom'), 'unknown failure', 500, 'INTERNAL_ERROR');
  });

  it('requests refused before any route runs: bodies, unknown paths and methods', async () => {
    const w = await createWorkspace();
    const h = headersOf(await sessionOf(w.owner));
    const json = { ...h, 'Content-Type': 'application/json' };
    const raw = (body: unknown): string => body as string;
    const cases: [string, () => Promise<Response>, number, string][] = [
      ['malformed JSON', () => client.post('/v1/enterprise/deals').set(json).send('{"title": '), 400, 'INVALID_BODY'],
      ['malformed JSON on an unknown path', () => client.post('/v1/enterprise/nothing-here').set(json).send('{'), 400, 'INVALID_BODY'],
      ['malformed JSON on a KYB invite path', () => client.patch('/v1/kyb/invite/some-token').set(json).send('['), 400, 'INVALID_BODY'],
      ['oversized body', () => client.post('/v1/enterprise/deals').set(json).send(`{"s":"${'x'.repeat(2 * MiB)}"}`), 413, 'FST_ERR_CTP_BODY_TOO_LARGE'],
      ['oversized body on an unknown path', () => client.post('/v1/enterprise/x/y/z').set(json).send(`{"s":"${'x'.repeat(2 * MiB)}"}`), 413, 'FST_ERR_CTP_BODY_TOO_LARGE'],
      [
        'body that does not decompress',
        () => client.post('/v1/enterprise/deals').set({ ...json, 'Content-Encoding': 'gzip' }).serialize(raw).send(Buffer.from('not gzip at all')),
        400,
        'INVALID_BODY',
      ],
      ['body with __proto__', () => client.post('/v1/enterprise/counterparties').set(json).send('{"__proto__": {"x": 1}}'), 400, 'INVALID_BODY'],
      ['unknown /v1/enterprise path', () => client.get('/v1/enterprise/nothing-here').set(h), 404, 'NOT_FOUND'],
      ['unknown path without credentials', () => client.get('/v1/enterprise/deals/1/2/3/4'), 404, 'NOT_FOUND'],
      ['unknown /v1/kyb path', () => client.get('/v1/kyb/elsewhere'), 404, 'NOT_FOUND'],
      ['the bare prefix', () => client.get('/v1/enterprise'), 404, 'NOT_FOUND'],
      ['a trailing slash (strict routing)', () => client.get('/v1/enterprise/settings/').set(h), 404, 'NOT_FOUND'],
      ['another spelling of the prefix', () => client.get('/V1/Enterprise/settings').set(h), 404, 'NOT_FOUND'],
      ['method not allowed: PUT on a collection', () => client.put('/v1/enterprise/deals').set(json).send({}), 404, 'NOT_FOUND'],
      ['method not allowed: DELETE settings', () => client.delete('/v1/enterprise/settings').set(h), 404, 'NOT_FOUND'],
      ['method not allowed: OPTIONS', () => client.options('/v1/enterprise/deals'), 404, 'NOT_FOUND'],
    ];
    for (const [label, send, status, code] of cases) expectPrivate(await send(), label, status, code);
  });

  it('refused credentials and access: 401, 403, 400 INVALID_ACCOUNT', async () => {
    const w = await createWorkspace();
    const session = await sessionOf(w.owner);
    const stranger = await sessionOf((await createUser()).user);
    const readKey = await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read']);
    const cases: [string, () => Promise<Response>, number, string][] = [
      ['no credentials', () => client.get('/v1/enterprise/deals'), 401, 'UNAUTHORIZED'],
      ['no credentials on a KYB invite link', () => client.get('/v1/kyb/invite/some-token'), 401, 'UNAUTHORIZED'],
      ['a wrong workspace key', () => client.get('/v1/enterprise/deals').set('Authorization', 'Bearer rpe_wrongwrongwrongwrongwrongwrong'), 401, 'INVALID_TOKEN'],
      ['a session write without CSRF token', () => client.post('/v1/enterprise/counterparties').set('Cookie', (session as { cookie: string }).cookie).send({ name: 'PT A' }), 403, 'CSRF_FAILED'],
      ['a read key writing', () => client.post('/v1/enterprise/counterparties').set('Authorization', `Bearer ${readKey.key}`).send({ name: 'PT A' }), 403, 'SCOPE_REQUIRED'],
      ['a key on a dashboard-only route', () => client.get('/v1/enterprise/api-keys').set('Authorization', `Bearer ${readKey.key}`), 403, 'KEY_NOT_ALLOWED'],
      ['a malformed workspace id', () => client.get('/v1/enterprise/deals').set(headersOf(session, 'nope')), 400, 'INVALID_ACCOUNT'],
      ['not a member', () => client.get('/v1/enterprise/deals').set(headersOf(stranger, w.workspace.id)), 403, 'NO_WORKSPACE'],
    ];
    for (const [label, send, status, code] of cases) expectPrivate(await send(), label, status, code);
  });

  it('a rate limit (429 RATE_LIMITED with Retry-After)', async () => {
    const { user } = await createUser();
    const h = headersOf(await sessionOf(user));
    // Registration: 5 per hour per user, counted before validation.
    for (let i = 0; i < 5; i += 1) expectPrivate(await client.post('/v1/enterprise/register').set(h).send({}), `register ${i + 1}`, 400, 'INVALID_BODY');
    const limited = await client.post('/v1/enterprise/register').set(h).send({});
    expectPrivate(limited, 'register 6', 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).to.be.above(0);
  });

  it('other paths keep the platform default (no-store, not private)', async () => {
    const res = await client.get('/v1/nothing-here');
    expect(res.status).to.equal(404);
    expect(res.headers['cache-control']).to.equal('no-store');
    const admin = await client.get('/v1/admin/enterprise/nothing');
    expect(admin.headers['cache-control']).to.equal('no-store');
  });
});

/**
 * Issue 16, points 2 and 3: JSON keys named after Object.prototype members and control
 * characters in strings are refused with 400 (naming the field) on every route; never 500,
 * and a body can never reach a prototype.
 */
import { brotliCompressSync } from 'node:zlib';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { createUser, signIn } from '../../factories/users.js';
import { bearer, newAgent, signUpBody, type TestAgent } from '../../helpers/auth-account-support.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { probeApi } from '../../helpers/platform-probe-router.js';

/** Keys that are members (or the prototype link) of every plain object. */
const PROTOTYPE_KEYS = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'prototype'] as const;

/** Raw JSON text: `__proto__` must stay a JSON key, which an object literal cannot express. */
function withKey(base: Record<string, unknown>, key: string, value: unknown): string {
  const inner = JSON.stringify(base).slice(1, -1);
  return `{${inner}${inner ? ',' : ''}${JSON.stringify(key)}:${JSON.stringify(value)}}`;
}

function expect400(res: Response, code: 'INVALID_BODY' | 'INVALID_QUERY', field: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.type).to.equal('application/json');
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
  expect(res.body.error.details).to.have.keys('formErrors', 'fieldErrors');
  const fieldErrors = res.body.error.details.fieldErrors as Record<string, unknown>;
  expect(Object.prototype.hasOwnProperty.call(fieldErrors, field), JSON.stringify(res.body)).to.equal(true);
  const messages = fieldErrors[field];
  expect(messages).to.be.an('array').with.length.greaterThan(0);
  for (const m of messages as unknown[]) expect(m).to.be.a('string').and.include(field);
}

function expectControlRefusal(res: Response, code: 'INVALID_BODY' | 'INVALID_QUERY', field: string): void {
  expect400(res, code, field);
  const messages = res.body.error.details.fieldErrors[field] as string[];
  expect(messages).to.deep.equal([`${field} must not contain control characters`]);
}

const sendRaw = (agent: TestAgent, method: 'post' | 'patch', path: string, text: string, csrf?: string) => {
  const req = agent[method](path).set('Content-Type', 'application/json');
  if (csrf) req.set('X-CSRF-Token', csrf);
  return req.send(text);
};

/** A signed-in agent (session + CSRF), for PATCH /v1/auth/me. */
async function signedIn(): Promise<{ agent: TestAgent; csrf: string }> {
  const { user, password } = await createUser();
  const agent = newAgent();
  const csrf = await signIn(agent, user.email, password);
  return { agent, csrf };
}

/** A valid body for each public route with a body, so only the extra key is wrong. */
const PUBLIC_ROUTES: { path: string; body: () => Record<string, unknown> }[] = [
  { path: '/v1/auth/login', body: () => ({ email: 'someone@example.com', password: 'Sturdy9Password' }) },
  { path: '/v1/auth/register', body: () => signUpBody() },
  { path: '/v1/auth/password/forgot', body: () => ({ email: 'someone@example.com' }) },
  { path: '/v1/auth/password/reset', body: () => ({ token: 'not-a-real-token', password: 'Sturdy9Password' }) },
];

describe('platform: prototype-named keys and control characters in JSON bodies', () => {
  afterEach(() => {
    // Nothing a request sent may ever show up on every object.
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(Object.prototype).to.not.have.own.property('polluted');
  });

  describe('prototype-named keys answer 400 INVALID_BODY naming the field, never 500', () => {
    for (const key of PROTOTYPE_KEYS) {
      for (const route of PUBLIC_ROUTES) {
        it(`POST ${route.path} with a top-level "${key}" key`, async () => {
          const res = await sendRaw(newAgent(), 'post', route.path, withKey(route.body(), key, 1));
          expect400(res, 'INVALID_BODY', key);
        });
      }

      it(`PATCH /v1/auth/me with a top-level "${key}" key (session + CSRF)`, async () => {
        const { agent, csrf } = await signedIn();
        const res = await sendRaw(agent, 'patch', '/v1/auth/me', withKey({ full_name: 'Budi' }, key, 'x'), csrf);
        expect400(res, 'INVALID_BODY', key);
        // Alone, too (the schema's "at least one field" rule must not hide it).
        const alone = await sendRaw(agent, 'patch', '/v1/auth/me', withKey({}, key, {}), csrf);
        expect400(alone, 'INVALID_BODY', key);
      });

      it(`a nested "${key}" key is named by its dotted path`, async () => {
        const text = `{"name":"abc","amount":10000,"email":"a@b.c","address":${withKey({ city: 'Bandung' }, key, 1)}}`;
        const res = await sendRaw(probeApi(), 'post', '/test/validate', text);
        expect400(res, 'INVALID_BODY', `address.${key}`);
      });

      it(`a nested "${key}" key inside a field of a real route answers 400, not 500`, async () => {
        const res = await sendRaw(newAgent(), 'post', '/v1/auth/login', `{"email":${withKey({}, key, 'x')},"password":"p"}`);
        expect400(res, 'INVALID_BODY', key === '__proto__' ? 'email.__proto__' : 'email');
      });
    }

    it('refuses __proto__ anywhere in a body, even on a route without a schema', async () => {
      for (const text of [
        '{"__proto__":{"polluted":true}}',
        '{"s":"x","deep":[{"a":{"__proto__":{"polluted":true}}}]}',
        '{"\\u005f_proto__":{"polluted":true}}',
      ]) {
        const res = await sendRaw(probeApi(), 'post', '/test/size', text);
        expect(res.status, `${text}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(JSON.stringify(res.body.error.details)).to.include('__proto__');
      }
      const nested = await sendRaw(probeApi(), 'post', '/test/size', '{"deep":[{"a":{"__proto__":{"polluted":true}}}]}');
      expect400(nested, 'INVALID_BODY', 'deep.0.a.__proto__');
    });

    it('refuses constructor.prototype (the other way a merged body reaches Object.prototype)', async () => {
      const res = await sendRaw(probeApi(), 'post', '/test/size', '{"constructor":{"prototype":{"polluted":true}}}');
      expect400(res, 'INVALID_BODY', 'constructor.prototype');
      const login = await sendRaw(newAgent(), 'post', '/v1/auth/login', '{"constructor":{"prototype":{"polluted":true}}}');
      expect(login.status).to.equal(400);
      expect(login.body.error.code).to.equal('INVALID_BODY');
    });

    it('answers a JSON array body with prototype-named keys in its items 400', async () => {
      const res = await sendRaw(newAgent(), 'post', '/v1/auth/login', '[{"constructor":1,"toString":2}]');
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
    });

    it('answers a prototype-named query parameter 400 INVALID_QUERY naming it', async () => {
      for (const key of ['constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype']) {
        const res = await probeApi().get(`/test/list?${key}=1`);
        expect400(res, 'INVALID_QUERY', key);
      }
    });

    it('still names a field once with all its messages (own-property bookkeeping)', async () => {
      const res = await probeApi()
        .post('/test/validate')
        .set('Content-Type', 'application/json')
        .send('{"name":"ab","amount":5,"email":"a@b.c","constructor":1,"toString":2}')
        .expect(400);
      const { fieldErrors } = res.body.error.details;
      expect(fieldErrors).to.have.keys('name', 'amount', 'constructor', 'toString');
      expect(fieldErrors.constructor).to.deep.equal(['constructor is not allowed']);
    });
  });

  describe('control characters answer 400 naming the field, before they reach Postgres', () => {
    it('POST /v1/auth/register with a NUL in full_name', async () => {
      const res = await newAgent().post('/v1/auth/register').send(signUpBody({ full_name: 'Budi\u0000Santoso' }));
      expectControlRefusal(res, 'INVALID_BODY', 'full_name');
    });

    it('PATCH /v1/auth/me with a NUL in social_instagram (and full_name)', async () => {
      const { agent, csrf } = await signedIn();
      const res = await agent.patch('/v1/auth/me').set('X-CSRF-Token', csrf).send({ social_instagram: 'budi\u0000' });
      expectControlRefusal(res, 'INVALID_BODY', 'social_instagram');
      const both = await agent
        .patch('/v1/auth/me')
        .set('X-CSRF-Token', csrf)
        .send({ full_name: '\u0000', social_shopee: 'shop\u0000', social_tiktokshop: 'ok' });
      expect400(both, 'INVALID_BODY', 'full_name');
      expect(both.body.error.details.fieldErrors).to.have.keys('full_name', 'social_shopee');
      const me = await agent.get('/v1/auth/me').expect(200);
      expect(me.body.data.user.social_instagram ?? null).to.equal(null);
    });

    it('POST /v1/auth/login with a NUL in email', async () => {
      const res = await newAgent().post('/v1/auth/login').send({ email: 'a\u0000@example.com', password: 'Sturdy9Password' });
      expectControlRefusal(res, 'INVALID_BODY', 'email');
    });

    it('refuses every C0 control character except tab, newline and carriage return, and DEL', async () => {
      const refused = [...Array.from({ length: 0x20 }, (_, i) => i).filter((c) => ![0x09, 0x0a, 0x0d].includes(c)), 0x7f];
      const api = probeApi();
      for (const code of refused) {
        const res = await api.post('/test/validate').send({ name: `ab${String.fromCharCode(code)}c`, amount: 10_000, email: 'a@b.c' });
        expect(res.status, `U+${code.toString(16).padStart(4, '0')}`).to.equal(400);
        expectControlRefusal(res, 'INVALID_BODY', 'name');
      }
    });

    it('accepts tab, newline and carriage return, and other unicode', async () => {
      const name = 'Budi\tSantoso\r\nJalan Merdeka ✓ 山田 \u0085 \u00a0 😀';
      const res = await probeApi().post('/test/validate').send({ name, amount: 10_000, email: 'a@b.c' }).expect(200);
      expect(res.body.data.body.name).to.equal(name);
    });

    it('names nested fields by their dotted path (objects and arrays)', async () => {
      const res = await probeApi()
        .post('/test/validate')
        .send({ name: 'abc', amount: 10_000, email: 'a@b.c', address: { city: 'Ban\u0001dung' } });
      expectControlRefusal(res, 'INVALID_BODY', 'address.city');
      const arr = await probeApi().post('/test/echo').send({ note: 'fine', tags: ['ok', 'b\u001b[31m'] });
      expectControlRefusal(arr, 'INVALID_BODY', 'tags.1');
    });

    it('refuses a control character in a field name, and in a field the schema does not know', async () => {
      const key = await probeApi().post('/test/echo').set('Content-Type', 'application/json').send('{"note":"x","a\\u0000b":1}');
      expect(key.status).to.equal(400);
      expect(key.body.error.code).to.equal('INVALID_BODY');
      const unknown = await probeApi().post('/test/echo').send({ note: 'x', extra: { deeper: ['\u0000'] } });
      expectControlRefusal(unknown, 'INVALID_BODY', 'extra.deeper.0');
    });

    it('refuses a control character in a query value with 400 INVALID_QUERY', async () => {
      const res = await probeApi().get('/test/list?status=op%00en');
      expectControlRefusal(res, 'INVALID_QUERY', 'status');
      const repeated = await probeApi().get('/test/list?status=open&status=cl%07osed');
      expect(repeated.status).to.equal(400);
      expect(repeated.body.error.code).to.equal('INVALID_QUERY');
    });
  });

  describe('control characters in a path segment answer 404, never 500 (found by the route fuzz test)', () => {
    let key: string;
    beforeEach(async () => {
      key = await issueKey((await createUser()).user.id);
    });

    // The sandbox passed its order id straight to Postgres, which refuses NUL in text: 500.
    for (const path of [
      '/api/sandbox/payments/%00/simulate',
      '/api/sandbox/payments/order%07x/simulate',
      '/v1/disputes/%00',
      '/api/jasabayar/a%1bb',
    ]) {
      it(`${path.includes('simulate') ? 'POST' : 'GET'} ${path}`, async () => {
        const req = path.includes('simulate') ? newAgent().post(path).send({ status: 'failed' }) : newAgent().get(path);
        const res = await req.set(...bearer(key));
        expect(res.status, JSON.stringify(res.body)).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
      });
    }

    it('still answers a well-formed unknown order id with the route\'s own 404', async () => {
      const res = await newAgent().post('/api/sandbox/payments/no-such-order/simulate').set(...bearer(key)).send({ status: 'failed' });
      expect(res.status, JSON.stringify(res.body)).to.equal(404);
      expect(res.body.error.code).to.equal('NOT_FOUND');
      expect(res.body.error.message).to.match(/sandbox/i);
    });
  });

  describe('compressed bodies that do not inflate (found by the route fuzz test)', () => {
    for (const encoding of ['br', 'deflate', 'gzip']) {
      it(`answers a body that is not ${encoding} but says so 400 INVALID_BODY, not 500`, async () => {
        const res = await newAgent()
          .post('/v1/auth/logout')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .send('{}');
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(res.body.error.details.formErrors).to.be.an('array').that.is.not.empty;
      });
    }

    it('reads a brotli-compressed body', async () => {
      const res = await probeApi()
        .post('/test/size')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'br')
        .serialize((b: unknown) => b as string)
        .send(brotliCompressSync(Buffer.from('{"s":"abc"}')))
        .expect(200);
      expect(res.body.data.length).to.equal(3);
    });
  });
});

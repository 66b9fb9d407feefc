import { expect } from 'chai';
import type { Response } from 'supertest';
import { AUTH_FAILURE_WINDOW_SECONDS, KEY_PREFIX_FAILURE_LIMIT } from '../../../api/middleware/rate-limit.js';
import { config, loadConfig } from '../../../shared/config.js';
import { randomToken } from '../../../shared/crypto.js';
import { createUser } from '../../factories/users.js';
import { api } from '../../helpers/app.js';
import { issueKey, signInRaw } from '../../helpers/auth-signin-util.js';

function expectLimited(res: Response, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(429);
  expect(res.body.error.code, label).to.equal('RATE_LIMITED');
  expect(Number(res.headers['retry-after']), label).to.be.within(1, AUTH_FAILURE_WINDOW_SECONDS);
}

const wrongKey = () => `rpk_${randomToken(32)}`;

describe('auth: failed credentials are rate limited per address and per key prefix', () => {
  it('is 20 failures per address in 15 minutes by default (AUTH_FAILURE_LIMIT)', () => {
    expect(loadConfig({}).authFailureLimit).to.equal(20);
    expect(config.authFailureLimit).to.equal(20);
  });

  it('answers wrong bearer keys 401 up to the limit, then 429 with Retry-After; the address is then refused even with a valid key', async () => {
    const app = api();
    const { user } = await createUser();
    const key = await issueKey(user.id);
    for (let i = 0; i < config.authFailureLimit; i++) {
      const res = await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${wrongKey()}`);
      expect(res.status, `attempt ${i + 1}`).to.equal(401);
    }
    expectLimited(await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${wrongKey()}`), 'one past the limit');
    expectLimited(await app.get('/v1/auth/me/api-key').set('Authorization', 'Basic Zm9vOmJhcg=='), 'a malformed header');
    expectLimited(await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${key}`), 'a valid key from the blocked address');
  });

  it('counts unknown session cookies the same way', async () => {
    const app = api();
    const { user, password } = await createUser();
    const session = await signInRaw(app, user.email, password);
    for (let i = 0; i < config.authFailureLimit; i++) {
      const res = await app.get('/v1/auth/me/api-key').set('Cookie', `${config.sessionCookieName}=${randomToken(32)}`);
      expect(res.status, `attempt ${i + 1}`).to.equal(401);
    }
    expectLimited(await app.get('/v1/auth/me/api-key').set('Cookie', `${config.sessionCookieName}=${randomToken(32)}`), 'past the limit');
    expectLimited(await app.get('/v1/auth/me/api-key').set('Cookie', session.cookie), 'a valid session from the blocked address');
  });

  it('does not count valid credentials, ended sessions or anonymous calls', async () => {
    const app = api();
    const { user, password } = await createUser();
    const key = await issueKey(user.id);
    const session = await signInRaw(app, user.email, password);
    await app.post('/v1/auth/logout').set('Cookie', session.cookie).set('X-CSRF-Token', session.csrf).expect(200);
    for (let i = 0; i < config.authFailureLimit + 5; i++) {
      await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${key}`).expect(200);
      await app.get('/v1/auth/me/api-key').set('Cookie', session.cookie).expect(401);
      await app.get('/v1/auth/me').expect(200);
    }
  });

  describe('behind a proxy (many addresses)', () => {
    const saved = config.trustProxy;
    before(() => {
      config.trustProxy = true;
    });
    after(() => {
      config.trustProxy = saved;
    });

    it('limits failures with one key prefix from many addresses, without blocking other prefixes', async () => {
      const app = api();
      const prefix = 'rpk_AbCd';
      for (let i = 0; i < KEY_PREFIX_FAILURE_LIMIT; i++) {
        const res = await app
          .get('/v1/auth/me/api-key')
          .set('X-Forwarded-For', `203.0.113.${i % 250}`)
          .set('Authorization', `Bearer ${prefix}${randomToken(32).slice(4)}`);
        expect(res.status, `attempt ${i + 1}`).to.equal(401);
      }
      const over = await app
        .get('/v1/auth/me/api-key')
        .set('X-Forwarded-For', '198.51.100.7')
        .set('Authorization', `Bearer ${prefix}${randomToken(32).slice(4)}`);
      expectLimited(over, 'same prefix, fresh address');
      const other = await app.get('/v1/auth/me/api-key').set('X-Forwarded-For', '198.51.100.8').set('Authorization', `Bearer ${wrongKey()}`);
      expect(other.status).to.equal(401);
    });
  });
});

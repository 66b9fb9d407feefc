import { expect } from 'chai';
import type { Response } from 'supertest';
import { AUTHENTICATED_LIMIT } from '../../../api/middleware/auth.js';
import { config, loadConfig } from '../../../shared/config.js';
import { createUser } from '../../factories/users.js';
import { api } from '../../helpers/app.js';
import { botCheckOff, issueKey, signInRaw, type Client } from '../../helpers/auth-signin-util.js';

function expectRateLimited(res: Response, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(429);
  expect(res.body.error.code, label).to.equal('RATE_LIMITED');
  const retryAfter = res.headers['retry-after'];
  expect(retryAfter, label).to.match(/^\d+$/);
  expect(Number(retryAfter), label).to.be.within(1, AUTHENTICATED_LIMIT.durationSeconds);
  expect(res.body.error.retry_after, label).to.equal(Number(retryAfter));
}

describe('sessions: shared per-user limit and public answers', () => {
  let app: Client;
  const savedPoints = AUTHENTICATED_LIMIT.points;
  botCheckOff();
  beforeEach(() => {
    app = api();
  });
  afterEach(() => {
    AUTHENTICATED_LIMIT.points = savedPoints;
  });

  it('is configured at 300 requests per minute by default (AUTH_RATE_LIMIT_PER_MINUTE)', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).authRateLimitPerMinute).to.equal(300);
    expect(savedPoints).to.equal(config.authRateLimitPerMinute);
    expect(AUTHENTICATED_LIMIT.durationSeconds).to.equal(60);
    expect(AUTHENTICATED_LIMIT.by).to.equal('user');
  });

  it('shares one per-user count over every authenticated route and credential: the 6th call of 5 answers 429 RATE_LIMITED; another user is not affected', async () => {
    const { user, password } = await createUser();
    const { user: other } = await createUser();
    const session = await signInRaw(app, user.email, password);
    const key = await issueKey(user.id);
    const otherKey = await issueKey(other.id);
    AUTHENTICATED_LIMIT.points = 5;

    // Five calls mixing routes and credentials of one user.
    await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${key}`).expect(200);
    await app.get('/v1/auth/me').set('Cookie', session.cookie).expect(200);
    await app.get('/v1/auth/me/api-key').set('Cookie', session.cookie).expect(200);
    await app.patch('/v1/auth/me').set('Authorization', `Bearer ${key}`).send({ full_name: 'Five Calls' }).expect(200);
    await app.get('/v1/auth/me').set('Authorization', `Bearer ${key}`).expect(200);

    expectRateLimited(await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${key}`), '6th call (key)');
    expectRateLimited(await app.get('/v1/auth/me').set('Cookie', session.cookie), '7th call (session, other route)');
    const write = await app.patch('/v1/auth/me').set('Cookie', session.cookie).set('X-CSRF-Token', session.csrf).send({ full_name: 'Too Many' });
    expectRateLimited(write, '8th call (session write)');

    // Another user has a count of their own.
    for (let i = 1; i <= 5; i++) await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${otherKey}`).expect(200);
    expectRateLimited(await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${otherKey}`), 'other user 6th call');

    // Anonymous answers are not counted against anyone.
    await app.get('/v1/auth/me').expect(200);
  });

  it('GET /v1/public/auth-config allows any origin and may be cached 60 seconds', async () => {
    const res = await app.get('/v1/public/auth-config').set('Origin', 'https://shop.example.net').expect(200);
    expect(res.headers['access-control-allow-origin']).to.equal('*');
    expect(res.headers['cache-control']).to.equal('public, max-age=60');
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect(res.body.success).to.equal(true);
    expect(res.body.data).to.have.all.keys('turnstile', 'google');
    expect(res.body.data.turnstile).to.have.all.keys('enabled', 'site_key');
    expect(res.body.data.turnstile.enabled).to.be.a('boolean');
    expect(res.body.data.turnstile.site_key).to.be.a('string');
    expect(res.body.data.google).to.have.all.keys('enabled');
    expect(res.body.data.google.enabled).to.be.a('boolean');
  });
});

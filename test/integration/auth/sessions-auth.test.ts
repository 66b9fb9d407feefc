import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { randomToken } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { createLegacyKey, createUser } from '../../factories/users.js';
import { api } from '../../helpers/app.js';
import {
  botCheckOff,
  issueKey,
  parseSetCookie,
  sessionSetCookie,
  signInRaw,
  type Client,
} from '../../helpers/auth-signin-util.js';

/** A route that needs credentials and changes nothing. */
const PROTECTED = '/v1/auth/me/api-key';

function expectError(res: Response, status: number, code: string, label = ''): void {
  expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.equal(status);
  expect(res.body.success, label).to.equal(false);
  expect(res.body.error.code, label).to.equal(code);
  expect(res.body.error.message, label).to.be.a('string');
}

function expectClearedCookie(res: Response): void {
  const line = sessionSetCookie(res);
  expect(line, 'the answer clears the session cookie').to.be.a('string');
  const cookie = parseSetCookie(line!);
  expect(cookie.value).to.equal('');
  expect(Date.parse(String(cookie.attributes.expires))).to.be.at.most(Date.now());
  expect(cookie.attributes.path).to.equal('/');
}

describe('sessions: credentials, logout and expiry', () => {
  let app: Client;
  botCheckOff();
  beforeEach(() => {
    app = api();
  });

  describe('logout', () => {
    it('with a session: revokes it, clears the cookie, and the same cookie then answers 401 SESSION_EXPIRED', async () => {
      const { user, password } = await createUser();
      const session = await signInRaw(app, user.email, password);
      const other = await signInRaw(app, user.email, password);

      const res = await app.post('/v1/auth/logout').set('Cookie', session.cookie).set('X-CSRF-Token', session.csrf).expect(200);
      expect(res.body).to.deep.equal({ success: true });
      expectClearedCookie(res);

      expectError(await app.get(PROTECTED).set('Cookie', session.cookie), 401, 'SESSION_EXPIRED', 'after logout');
      const again = await app.post('/v1/auth/logout').set('Cookie', session.cookie).set('X-CSRF-Token', session.csrf);
      expectError(again, 401, 'SESSION_EXPIRED', 'logout twice');
      // The optional route treats it as signed out.
      const me = await app.get('/v1/auth/me').set('Cookie', session.cookie).expect(200);
      expect(me.body.data).to.deep.equal({ user: null, csrf_token: null });
      // Only that session ended.
      await app.get(PROTECTED).set('Cookie', other.cookie).expect(200);
    });

    it('with an API key: answers { success: true } and the key and the sessions keep working', async () => {
      const { user, password } = await createUser();
      const session = await signInRaw(app, user.email, password);
      const key = await issueKey(user.id);

      const res = await app.post('/v1/auth/logout').set('Authorization', `Bearer ${key}`).expect(200);
      expect(res.body).to.deep.equal({ success: true });
      expect(sessionSetCookie(res)).to.equal(undefined);

      await app.get(PROTECTED).set('Authorization', `Bearer ${key}`).expect(200);
      const me = await app.get('/v1/auth/me').set('Cookie', session.cookie).expect(200);
      expect(me.body.data.user.id).to.equal(user.id);
      const live = (await db('sessions').where({ user_id: user.id }).whereNull('revoked_at').select('id')) as unknown[];
      expect(live).to.have.length(1);
    });
  });

  it('an expired session answers 401 SESSION_EXPIRED (it works until sessionTtlHours have passed)', async () => {
    const { user, password } = await createUser();
    const session = await signInRaw(app, user.email, password);
    const ttlMs = config.sessionTtlHours * 3600_000;
    const savedIdle = config.sessionIdleMinutes;
    config.sessionIdleMinutes = config.sessionTtlHours * 60; // the absolute lifetime alone
    try {
      clock.advance(ttlMs - 60_000);
      await app.get(PROTECTED).set('Cookie', session.cookie).expect(200);
      clock.advance(61_000);
      const res = await app.get(PROTECTED).set('Cookie', session.cookie);
      expectError(res, 401, 'SESSION_EXPIRED', 'past the TTL');
      expectClearedCookie(res);
      const write = await app.patch('/v1/auth/me').set('Cookie', session.cookie).set('X-CSRF-Token', session.csrf).send({ full_name: 'Late' });
      expectError(write, 401, 'SESSION_EXPIRED', 'write past the TTL');
    } finally {
      config.sessionIdleMinutes = savedIdle;
    }
  });

  it('a session unused for SESSION_IDLE_MINUTES answers 401 SESSION_EXPIRED; use keeps it alive', async () => {
    expect(config.sessionIdleMinutes).to.equal(120);
    const { user, password } = await createUser();
    const session = await signInRaw(app, user.email, password);
    const idleMs = config.sessionIdleMinutes * 60_000;
    // Used every idle period minus a minute, for three periods: still alive.
    for (let i = 0; i < 3; i++) {
      clock.advance(idleMs - 60_000);
      await app.get(PROTECTED).set('Cookie', session.cookie).expect(200);
    }
    clock.advance(idleMs);
    const res = await app.get(PROTECTED).set('Cookie', session.cookie);
    expectError(res, 401, 'SESSION_EXPIRED', 'idle too long');
    expectClearedCookie(res);
  });

  it('an unknown session cookie answers 401 INVALID_TOKEN on a required-auth route (signed out on /me)', async () => {
    const cookie = `${config.sessionCookieName}=${randomToken(32)}`;
    const res = await app.get(PROTECTED).set('Cookie', cookie);
    expectError(res, 401, 'INVALID_TOKEN', 'unknown cookie');
    expectClearedCookie(res);
    const me = await app.get('/v1/auth/me').set('Cookie', cookie).expect(200);
    expect(me.body.data).to.deep.equal({ user: null, csrf_token: null });
  });

  it('no credentials answer 401 UNAUTHORIZED', async () => {
    expectError(await app.get(PROTECTED), 401, 'UNAUTHORIZED', 'GET');
    expectError(await app.post('/v1/auth/logout'), 401, 'UNAUTHORIZED', 'logout');
    expectError(await app.patch('/v1/auth/me').send({ full_name: 'X' }), 401, 'UNAUTHORIZED', 'PATCH');
    // Another cookie name is no credential either.
    expectError(await app.get(PROTECTED).set('Cookie', 'other=1'), 401, 'UNAUTHORIZED', 'foreign cookie');
  });

  describe('Authorization header', () => {
    it('a workspace key (rpe_) answers 401 WORKSPACE_KEY_ONLY', async () => {
      expectError(await app.get(PROTECTED).set('Authorization', `Bearer rpe_${randomToken(32)}`), 401, 'WORKSPACE_KEY_ONLY');
      expectError(await app.get('/v1/auth/me').set('Authorization', 'Bearer rpe_xxx'), 401, 'WORKSPACE_KEY_ONLY', '/me');
    });

    it('a wrong, revoked or unknown-format key answers 401 INVALID_TOKEN', async () => {
      const { user } = await createUser();
      const key = await issueKey(user.id);
      await app.get(PROTECTED).set('Authorization', `Bearer ${key}`).expect(200);

      expectError(await app.get(PROTECTED).set('Authorization', `Bearer rpk_${randomToken(32)}`), 401, 'INVALID_TOKEN', 'unknown rpk_');
      expectError(await app.get(PROTECTED).set('Authorization', `Bearer ${key.slice(0, -1)}x`), 401, 'INVALID_TOKEN', 'altered');
      expectError(await app.get(PROTECTED).set('Authorization', `Bearer ${randomToken(32)}`), 401, 'INVALID_TOKEN', 'unknown legacy');
      expectError(await app.get(PROTECTED).set('Authorization', `Bearer ${randomUUID()}`), 401, 'INVALID_TOKEN', 'not a key');

      // Rotation revokes the previous key at once.
      const rotated = await app.post('/v1/auth/me/api-key/rotate').set('Authorization', `Bearer ${key}`).expect(200);
      expectError(await app.get(PROTECTED).set('Authorization', `Bearer ${key}`), 401, 'INVALID_TOKEN', 'revoked');
      await app.get(PROTECTED).set('Authorization', `Bearer ${rotated.body.data.api_key as string}`).expect(200);
    });

    it('a legacy 43-character key without prefix works', async () => {
      const { user } = await createUser();
      const legacy = await createLegacyKey(user.id);
      const res = await app.get('/v1/auth/me').set('Authorization', `Bearer ${legacy}`).expect(200);
      expect(res.body.data.user.id).to.equal(user.id);
    });

    it('a malformed Authorization header answers 401 INVALID_TOKEN', async () => {
      const { user } = await createUser();
      const key = await issueKey(user.id);
      for (const header of [`Basic ${Buffer.from('a:b').toString('base64')}`, 'Bearer', 'Bearer ', `Bearer ${key} extra`, key, `Token ${key}`]) {
        expectError(await app.get(PROTECTED).set('Authorization', header), 401, 'INVALID_TOKEN', JSON.stringify(header));
      }
    });
  });

  describe('refused accounts with live credentials', () => {
    for (const [status, code] of [
      ['suspended', 'SUSPENDED'],
      ['closed', 'ACCOUNT_INACTIVE'],
      ['deleting', 'ACCOUNT_INACTIVE'],
    ] as const) {
      it(`a ${status} account answers 403 ${code} with a live session or key`, async () => {
        const { user, password } = await createUser();
        const session = await signInRaw(app, user.email, password);
        const key = await issueKey(user.id);
        await db('users').where({ id: user.id }).update({ status });

        expectError(await app.get(PROTECTED).set('Cookie', session.cookie), 403, code, 'session GET');
        expectError(await app.get(PROTECTED).set('Authorization', `Bearer ${key}`), 403, code, 'key GET');
        const patch = await app.patch('/v1/auth/me').set('Cookie', session.cookie).set('X-CSRF-Token', session.csrf).send({ full_name: 'Nope' });
        expectError(patch, 403, code, 'session PATCH');
        expectError(await app.patch('/v1/auth/me').set('Authorization', `Bearer ${key}`).send({ full_name: 'Nope' }), 403, code, 'key PATCH');
        expectError(await app.get('/v1/auth/me').set('Cookie', session.cookie), 403, code, 'session /me');
        const row = (await db('users').where({ id: user.id }).first()) as { full_name: string };
        expect(row.full_name).to.equal(user.full_name);
      });
    }

    it('suspension by staff (POST /v1/admin/users/:id/suspend) refuses key and session with 403 SUSPENDED and ends the sessions; reactivation lets the key in again', async () => {
      const { user: admin } = await createUser({ role: 'admin' });
      const adminKey = await issueKey(admin.id);
      const { user, password } = await createUser();
      const session = await signInRaw(app, user.email, password);
      const key = await issueKey(user.id);

      const suspended = await app
        .post(`/v1/admin/users/${user.id}/suspend`)
        .set('Authorization', `Bearer ${adminKey}`)
        .send({ note: 'fraud review' })
        .expect(200);
      expect(suspended.body.data.user).to.include({ id: user.id, is_suspended: true });

      expectError(await app.get(PROTECTED).set('Authorization', `Bearer ${key}`), 403, 'SUSPENDED', 'key');
      expectError(await app.get(PROTECTED).set('Cookie', session.cookie), 403, 'SUSPENDED', 'session');
      const live = (await db('sessions').where({ user_id: user.id }).whereNull('revoked_at').select('id')) as unknown[];
      expect(live, 'suspension ends the sessions').to.have.length(0);

      await app.post(`/v1/admin/users/${user.id}/reactivate`).set('Authorization', `Bearer ${adminKey}`).send({}).expect(200);
      await app.get(PROTECTED).set('Authorization', `Bearer ${key}`).expect(200);
      // The sessions stay ended: sign in again.
      expectError(await app.get(PROTECTED).set('Cookie', session.cookie), 401, 'SESSION_EXPIRED', 'session after reactivation');
    });
  });

  it('keeps authenticating on the same connections after a migration adds a users column (prepared statements name their columns)', async () => {
    const { user, password } = await createUser();
    const session = await signInRaw(app, user.email, password);
    const key = await issueKey(user.id);
    // Warm every pooled connection's prepared statements first.
    await Promise.all(Array.from({ length: 12 }, () => app.get(PROTECTED).set('Authorization', `Bearer ${key}`).expect(200)));
    await Promise.all(Array.from({ length: 12 }, () => app.get(PROTECTED).set('Cookie', session.cookie).expect(200)));
    await db.raw('ALTER TABLE users ADD COLUMN probe_added text');
    try {
      await Promise.all(Array.from({ length: 12 }, () => app.get(PROTECTED).set('Authorization', `Bearer ${key}`).expect(200)));
      await Promise.all(Array.from({ length: 12 }, () => app.get(PROTECTED).set('Cookie', session.cookie).expect(200)));
    } finally {
      await db.raw('ALTER TABLE users DROP COLUMN probe_added');
    }
  });
});

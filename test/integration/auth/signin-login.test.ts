import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { config } from '../../../shared/config.js';
import { createUser } from '../../factories/users.js';
import { api } from '../../helpers/app.js';
import { fundUser } from '../../helpers/platform-factories.js';
import {
  botCheckOff,
  cookieFrom,
  countRows,
  parseSetCookie,
  postLogin,
  sessionSetCookie,
  type Client,
} from '../../helpers/auth-signin-util.js';

const USER_FIELDS = [
  'id',
  'email',
  'role',
  'full_name',
  'username',
  'phone',
  'kyc_status',
  'balance',
  'is_suspended',
  'is_verified',
  'two_factor_method',
  'dashboard_tour_completed_at',
  'social_instagram',
  'social_shopee',
  'social_tiktokshop',
  'created_at',
  'has_password',
  'email_verification_required',
];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('sign-in: POST /v1/auth/login', () => {
  let app: Client;
  const savedSecure = config.sessionCookieSecure;
  botCheckOff();
  beforeEach(() => {
    app = api();
  });
  afterEach(() => {
    config.sessionCookieSecure = savedSecure;
  });

  describe('success', () => {
    it('answers data { user (every User field), csrf_token } and sets an HttpOnly, SameSite=Lax, path=/ cookie', async () => {
      const { user, password } = await createUser({ fullName: 'Siti Rahma' });
      await fundUser(user.id, 1_250_000);
      config.sessionCookieSecure = false;

      const before = Date.now();
      const res = await postLogin(app, { email: user.email, password }).expect(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.data).to.have.all.keys('user', 'csrf_token');
      expect(res.body.data.csrf_token).to.be.a('string').with.length.greaterThan(15);

      const u = res.body.data.user;
      expect(u).to.have.all.keys(...USER_FIELDS);
      expect(u.id).to.equal(user.id).and.match(UUID);
      expect(u).to.include({
        email: user.email,
        role: 'user',
        full_name: 'Siti Rahma',
        username: user.username,
        phone: null,
        kyc_status: 'unverified',
        is_suspended: false,
        is_verified: true,
        two_factor_method: 'none',
        dashboard_tour_completed_at: null,
        social_instagram: null,
        social_shopee: null,
        social_tiktokshop: null,
        has_password: true,
        email_verification_required: false,
      });
      expect(u.balance).to.equal(1_250_000);
      expect(Number.isInteger(u.balance)).to.equal(true);
      expect(u.created_at).to.match(ISO_MS).and.equal(user.created_at.toISOString());

      const line = sessionSetCookie(res);
      expect(line, 'session cookie set').to.be.a('string');
      const cookie = parseSetCookie(line!);
      expect(cookie.value).to.have.length.greaterThan(30);
      expect(cookie.attributes.httponly).to.equal(true);
      expect(String(cookie.attributes.samesite).toLowerCase()).to.equal('lax');
      expect(cookie.attributes.path).to.equal('/');
      expect(cookie.attributes).to.not.have.property('secure');
      const expires = Date.parse(String(cookie.attributes.expires));
      const ttl = config.sessionTtlHours * 3600_000;
      expect(expires).to.be.within(before + ttl - 5_000, Date.now() + ttl + 5_000);

      // The cookie is the session: /me answers the same user and CSRF token.
      const me = await app.get('/v1/auth/me').set('Cookie', cookieFrom(res)).expect(200);
      expect(me.body.data.user).to.deep.equal(u);
      expect(me.body.data.csrf_token).to.equal(res.body.data.csrf_token);
    });

    it('reports is_verified false and email_verification_required true for an unverified account', async () => {
      const { user, password } = await createUser({ verified: false });
      const res = await postLogin(app, { email: user.email, password }).expect(200);
      expect(res.body.data.user).to.include({ is_verified: false, email_verification_required: true, has_password: true });
    });

    it('marks the cookie Secure when config.sessionCookieSecure is true', async () => {
      const { user, password } = await createUser();
      config.sessionCookieSecure = true;
      const res = await postLogin(app, { email: user.email, password }).expect(200);
      const cookie = parseSetCookie(sessionSetCookie(res)!);
      expect(cookie.attributes.secure).to.equal(true);
      expect(cookie.attributes.httponly).to.equal(true);
      expect(String(cookie.attributes.samesite).toLowerCase()).to.equal('lax');
      expect(cookie.attributes.path).to.equal('/');
    });

    it('compares the e-mail case-insensitively', async () => {
      const { user, password } = await createUser({ email: 'Dewi.Lestari@Example.COM' });
      expect(user.email).to.equal('dewi.lestari@example.com');
      const res = await postLogin(app, { email: 'DEWI.lestari@EXAMPLE.com', password }).expect(200);
      expect(res.body.data.user.id).to.equal(user.id);
      expect(res.body.data.user.email).to.equal('dewi.lestari@example.com');
    });

    it('has no idempotency: the same Idempotency-Key twice signs in twice (two sessions, no replay)', async () => {
      const { user, password } = await createUser();
      const key = randomUUID();
      const first = await app.post('/v1/auth/login').set('Idempotency-Key', key).send({ email: user.email, password }).expect(200);
      const second = await app.post('/v1/auth/login').set('Idempotency-Key', key).send({ email: user.email, password }).expect(200);
      expect(second.headers['idempotent-replay']).to.equal(undefined);
      expect(second.body.data.csrf_token).to.not.equal(first.body.data.csrf_token);
      expect(cookieFrom(second)).to.not.equal(cookieFrom(first));
      expect(await countRows('sessions', { user_id: user.id })).to.equal(2);

      // A failure under the same key is not replayed as the earlier success either.
      const third = await app.post('/v1/auth/login').set('Idempotency-Key', key).send({ email: user.email, password: 'Wrong1Horse' });
      expect(third.status).to.equal(401);
      expect(third.body.error.code).to.equal('INVALID_CREDENTIALS');
    });
  });

  describe('400 INVALID_BODY', () => {
    // 64 + 1 + 63 + 1 + 63 + 1 + d + 4 characters: a well-formed address of any length.
    const longEmail = (length: number) => `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 197)}.com`;

    async function expectInvalidBody(send: (c: Client) => Promise<Response>, field?: string) {
      const res = await send(app);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(res.body.error.details).to.have.all.keys('formErrors', 'fieldErrors');
      if (field) expect(res.body.error.details.fieldErrors).to.have.property(field);
      expect(sessionSetCookie(res)).to.equal(undefined);
    }

    it('refuses a missing e-mail or password', async () => {
      const { user, password } = await createUser();
      await expectInvalidBody((c) => postLogin(c, { password }), 'email');
      await expectInvalidBody((c) => postLogin(c, { email: user.email }), 'password');
      await expectInvalidBody((c) => postLogin(c, {}), 'email');
      await expectInvalidBody((c) => postLogin(c, { email: user.email, password: '' }), 'password');
      await expectInvalidBody((c) => postLogin(c, { email: user.email, password: 12345678 }), 'password');
      expect(await countRows('sessions')).to.equal(0);
    });

    it('refuses an e-mail longer than 254 characters (254 is accepted and checked)', async () => {
      expect(longEmail(255)).to.have.length(255);
      expect(longEmail(254)).to.have.length(254);
      await expectInvalidBody((c) => postLogin(c, { email: longEmail(255), password: 'Whatever1' }), 'email');
      const at254 = await postLogin(app, { email: longEmail(254), password: 'Whatever1' });
      expect(at254.status).to.equal(401);
      expect(at254.body.error.code).to.equal('INVALID_CREDENTIALS');
    });

    it('refuses a password longer than 128 characters (128 is accepted and checked)', async () => {
      const { user } = await createUser();
      await expectInvalidBody((c) => postLogin(c, { email: user.email, password: 'A1'.repeat(64) + 'x' }), 'password');
      const at128 = await postLogin(app, { email: user.email, password: 'A1'.repeat(64) });
      expect(at128.status).to.equal(401);
      expect(at128.body.error.code).to.equal('INVALID_CREDENTIALS');
    });

    it('refuses a body that is not a JSON object, and malformed JSON', async () => {
      const { user, password } = await createUser();
      await expectInvalidBody((c) => c.post('/v1/auth/login').send([{ email: user.email, password }]));
      await expectInvalidBody((c) => c.post('/v1/auth/login').set('Content-Type', 'application/json').send('"just a string"'));
      await expectInvalidBody((c) => c.post('/v1/auth/login').set('Content-Type', 'application/json').send('null'));
      await expectInvalidBody((c) =>
        c.post('/v1/auth/login').set('Content-Type', 'application/json').send(`{"email":"${user.email}","password":`),
      );
      await expectInvalidBody((c) => c.post('/v1/auth/login'));
      expect(await countRows('sessions')).to.equal(0);
    });
  });

  describe('401 INVALID_CREDENTIALS', () => {
    it('answers an unknown e-mail exactly like a wrong password', async () => {
      const { user } = await createUser();
      const wrong = await postLogin(app, { email: user.email, password: 'Wrong1Horse' });
      const unknown = await postLogin(app, { email: `nobody-${randomUUID()}@example.com`, password: 'Wrong1Horse' });
      expect(wrong.status).to.equal(401);
      expect(unknown.status).to.equal(401);
      expect(wrong.body.error.code).to.equal('INVALID_CREDENTIALS');
      expect(wrong.body.error.requires_captcha).to.equal(false);
      expect(unknown.body.error).to.deep.equal(wrong.body.error);
      expect(unknown.body).to.deep.equal(wrong.body);
      expect(sessionSetCookie(wrong)).to.equal(undefined);
      expect(sessionSetCookie(unknown)).to.equal(undefined);
    });

    it('does not reveal a suspended or closed account to a wrong password', async () => {
      const { user: suspended } = await createUser({ status: 'suspended' });
      const { user: closed } = await createUser({ status: 'closed' });
      const unknown = await postLogin(app, { email: `nobody-${randomUUID()}@example.com`, password: 'Wrong1Horse' });
      for (const u of [suspended, closed]) {
        const res = await postLogin(app, { email: u.email, password: 'Wrong1Horse' });
        expect(res.status).to.equal(401);
        expect(res.body).to.deep.equal(unknown.body);
      }
    });
  });

  describe('403 at sign-in with the right password', () => {
    it('answers SUSPENDED for a suspended account and starts no session', async () => {
      const { user, password } = await createUser({ status: 'suspended' });
      const res = await postLogin(app, { email: user.email, password });
      expect(res.status).to.equal(403);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('SUSPENDED');
      expect(sessionSetCookie(res)).to.equal(undefined);
      expect(await countRows('sessions')).to.equal(0);
    });

    for (const status of ['closed', 'deleting'] as const) {
      it(`answers ACCOUNT_INACTIVE for a ${status} account and starts no session`, async () => {
        const { user, password } = await createUser({ status });
        const res = await postLogin(app, { email: user.email, password });
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal('ACCOUNT_INACTIVE');
        expect(sessionSetCookie(res)).to.equal(undefined);
        expect(await countRows('sessions')).to.equal(0);
      });
    }
  });
  describe('501 TWO_FACTOR_METHOD_UNSUPPORTED', () => {
    it('answers a carried-over account with a method the service does not offer (totp), with the right password only', async () => {
      const { user, password } = await createUser({ twoFactor: 'totp' });
      const wrong = await postLogin(app, { email: user.email, password: 'Wrong1Horse' });
      expect(wrong.status).to.equal(401);
      expect(wrong.body.error.code).to.equal('INVALID_CREDENTIALS');
      const res = await postLogin(app, { email: user.email, password });
      expect(res.status).to.equal(501);
      expect(res.body.error.code).to.equal('TWO_FACTOR_METHOD_UNSUPPORTED');
      expect(sessionSetCookie(res)).to.equal(undefined);
      expect(await countRows('sessions')).to.equal(0);
      expect(await countRows('auth_codes')).to.equal(0);
    });
  });
});

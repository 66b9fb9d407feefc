import { expect } from 'chai';
import type { Response } from 'supertest';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { createUser } from '../../factories/users.js';
import { newAgent, sessionTokenOf, signUpBody, type TestAgent } from '../../helpers/auth-account-support.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';

describe('accounts: sign-up (POST /v1/auth/register)', () => {
  function expectError(res: Response, status: number, code: string): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.error.code).to.equal(code);
    expect(res.body.error.message).to.be.a('string');
  }

  it('answers 201 with { user, csrf_token }, sets the session cookie, stores e-mail and username lower-case', async () => {
    const agent = newAgent();
    const body = signUpBody({ email: '  Mixed.Case@Example.COM ', username: 'Mixed_Case.User', full_name: 'Siti Rahma' });
    const res = await agent.post('/v1/auth/register').send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.success).to.equal(true);
    const { user, csrf_token } = res.body.data;
    expect(csrf_token).to.be.a('string').with.length.greaterThan(10);
    expect(user).to.include({
      email: 'mixed.case@example.com',
      username: 'mixed_case.user',
      full_name: 'Siti Rahma',
      role: 'user',
      is_verified: false,
      email_verification_required: true,
      is_suspended: false,
      two_factor_method: 'none',
      has_password: true,
      phone: null,
      dashboard_tour_completed_at: null,
    });
    expect(user.id).to.match(/^[0-9a-f-]{36}$/);
    expect(user).to.not.have.property('password_hash');
    expect(user.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0] ?? '';
    expect(cookie).to.match(/^escrow_session=[^;]+;/);
    expect(cookie.toLowerCase()).to.include('httponly');
    expect(sessionTokenOf(res)).to.be.a('string');

    const row = await db('users').where({ id: user.id }).first();
    expect(row.email).to.equal('mixed.case@example.com');
    expect(row.username).to.equal('mixed_case.user');
    expect(row.password_hash).to.match(/^\$argon2id\$/);
    expect(row.email_verified_at).to.equal(null);

    // The cookie is a working session.
    const me = await agent.get('/v1/auth/me').expect(200);
    expect(me.body.data.user.id).to.equal(user.id);
    expect(me.body.data.csrf_token).to.equal(csrf_token);
  });

  it('answers 400 WEAK_PASSWORD for too short, no upper-case, no lower-case and no digit', async () => {
    const agent = newAgent();
    for (const password of ['Ab1defg', 'alllower1case', 'ALLUPPER1CASE', 'NoDigitsHere']) {
      const res = await agent.post('/v1/auth/register').send(signUpBody({ password }));
      expectError(res, 400, 'WEAK_PASSWORD');
    }
    // The boundary: exactly 8 characters with all three classes is accepted.
    await agent.post('/v1/auth/register').send(signUpBody({ password: 'Abcdef12' })).expect(201);
    expect(await db('users').count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });

  it('answers 400 INVALID_USERNAME for too short, bad characters and more than 30 characters', async () => {
    const agent = newAgent();
    for (const username of ['ab', 'bad-name', 'has space', 'émile', 'a'.repeat(31)]) {
      const res = await agent.post('/v1/auth/register').send(signUpBody({ username }));
      expectError(res, 400, 'INVALID_USERNAME');
    }
    await agent.post('/v1/auth/register').send(signUpBody({ username: 'a'.repeat(30) })).expect(201);
    expect(await db('users').count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });

  it('answers 409 EMAIL_TAKEN and USERNAME_TAKEN, comparing case-insensitively', async () => {
    const { user } = await createUser({ email: 'taken@example.com', username: 'taken_name' });
    const agent = newAgent();
    expectError(await agent.post('/v1/auth/register').send(signUpBody({ email: 'TAKEN@Example.com' })), 409, 'EMAIL_TAKEN');
    expectError(await agent.post('/v1/auth/register').send(signUpBody({ username: 'Taken_NAME' })), 409, 'USERNAME_TAKEN');
    const rows = await db('users').select('id');
    expect(rows.map((r: { id: string }) => r.id)).to.deep.equal([user.id]);
  });

  it('answers 400 INVALID_BODY with details.fieldErrors for missing and malformed fields', async () => {
    const agent = newAgent();
    const res = await agent.post('/v1/auth/register').send({ email: 'not-an-email', password: 'Sturdy9Password' });
    expectError(res, 400, 'INVALID_BODY');
    const { fieldErrors, formErrors } = res.body.error.details;
    expect(formErrors).to.be.an('array');
    expect(fieldErrors).to.have.all.keys('email', 'username', 'full_name');
    expect(fieldErrors.email[0]).to.be.a('string');

    const extra = await agent.post('/v1/auth/register').send({ ...signUpBody(), role: 'admin' });
    expectError(extra, 400, 'INVALID_BODY');
    expect(extra.body.error.details.fieldErrors).to.have.property('role');

    const array = await agent.post('/v1/auth/register').send([signUpBody()]);
    expectError(array, 400, 'INVALID_BODY');
    expect(await db('users').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  /**
   * Holds an exclusive lock on `users` until `count` requests wait for it, then lets them
   * all go at once: every racer has passed its "is the e-mail free?" read before any insert,
   * so the unique index (not the read) must decide.
   */
  async function releaseTogether<T>(count: number, start: () => Promise<T>): Promise<T> {
    const trx = await db.transaction();
    let pending: Promise<T> | undefined;
    try {
      await trx.raw('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      pending = start();
      const deadline = Date.now() + 10_000;
      for (;;) {
        const { rows } = await db.raw<{ rows: { n: number }[] }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
           WHERE c.relname = 'users' AND NOT l.granted
             AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        if (rows[0]!.n >= count) break;
        if (Date.now() > deadline) throw new Error(`only ${rows[0]!.n} of ${count} requests reached the users table`);
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await trx.commit();
    }
    return pending;
  }

  it('two concurrent sign-ups with the same e-mail: exactly one 201 and one 409 EMAIL_TAKEN', async () => {
    const email = 'race@example.com';
    const [a, b] = await releaseTogether(2, () =>
      Promise.all([
        newAgent().post('/v1/auth/register').send(signUpBody({ email })),
        newAgent().post('/v1/auth/register').send(signUpBody({ email: 'RACE@example.com' })),
      ]),
    );
    const statuses = [a.status, b.status].sort();
    expect(statuses, JSON.stringify([a.body, b.body])).to.deep.equal([201, 409]);
    const loser = a.status === 409 ? a : b;
    expect(loser.body.error.code).to.equal('EMAIL_TAKEN');
    expect(await db('users').where({ email }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });

  it('five concurrent sign-ups with the same e-mail: one account, four EMAIL_TAKEN, no 500', async () => {
    const email = 'crowd@example.com';
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => newAgent().post('/v1/auth/register').send(signUpBody({ email }))),
    );
    const summary = answers.map((r) => `${r.status} ${r.body.error?.code ?? ''}`.trim()).sort();
    expect(summary).to.deep.equal(['201', '409 EMAIL_TAKEN', '409 EMAIL_TAKEN', '409 EMAIL_TAKEN', '409 EMAIL_TAKEN']);
    expect(await db('users').where({ email }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });

  it('answers 429 RATE_LIMITED with Retry-After after 10 sign-up attempts from one address in an hour', async () => {
    const agent = newAgent();
    for (let i = 0; i < 10; i++) {
      const res = await agent.post('/v1/auth/register').send({ email: `bad${i}@example.com` });
      expect(res.status, `attempt ${i + 1}`).to.equal(400);
    }
    const res = await agent.post('/v1/auth/register').send(signUpBody());
    expectError(res, 429, 'RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).to.be.within(1, 3600);
    expect(await db('users').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('two concurrent sign-ups with the same username: one 201 and one 409 USERNAME_TAKEN', async () => {
    const [a, b] = await releaseTogether(2, () =>
      Promise.all([
        newAgent().post('/v1/auth/register').send(signUpBody({ username: 'same_name' })),
        newAgent().post('/v1/auth/register').send(signUpBody({ username: 'SAME_name' })),
      ]),
    );
    const summary = [a, b].map((r) => `${r.status} ${r.body.error?.code ?? ''}`.trim()).sort();
    expect(summary).to.deep.equal(['201', '409 USERNAME_TAKEN']);
    expect(await db('users').where({ username: 'same_name' }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });
});

describe('accounts: e-mail verification (POST /v1/auth/verify-email)', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());

  async function signUp(): Promise<{ agent: TestAgent; csrf: string; email: string; userId: string }> {
    const agent = newAgent();
    const body = signUpBody();
    const res = await agent.post('/v1/auth/register').send(body).expect(201);
    await runJobs(['mail']);
    return { agent, csrf: res.body.data.csrf_token as string, email: body.email, userId: res.body.data.user.id as string };
  }

  /** A new session of an account made by signUp() (whose own session may have gone idle). */
  async function freshSession(email: string): Promise<{ agent: TestAgent; csrf: string }> {
    const agent = newAgent();
    const res = await agent.post('/v1/auth/login').send({ email, password: signUpBody().password }).expect(200);
    return { agent, csrf: res.body.data.csrf_token as string };
  }

  function wrongCode(good: string): string {
    return good === '000000' ? '111111' : '000000';
  }

  it('e-mails a 6-digit code; confirming it makes the account verified', async () => {
    const { agent, csrf, email, userId } = await signUp();
    const mails = mail.to(email);
    expect(mails).to.have.length(1);
    expect(mails[0]!.subject).to.match(/verify/i);
    const code = mail.lastCode(email);
    expect(code).to.match(/^\d{6}$/);

    const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code }).expect(200);
    expect(res.body.data.user).to.include({ id: userId, is_verified: true, email_verification_required: false });
    const me = await agent.get('/v1/auth/me').expect(200);
    expect(me.body.data.user.is_verified).to.equal(true);
    const row = await db('users').where({ id: userId }).first();
    expect(row.email_verified_at).to.be.instanceOf(Date);
  });

  it('answers 400 INVALID_CODE reason wrong, then exhausted after five wrong codes (the right code no longer works)', async () => {
    const { agent, csrf, email, userId } = await signUp();
    const good = mail.lastCode(email);
    const reasons: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: wrongCode(good) });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_CODE');
      reasons.push(res.body.error.reason as string);
    }
    expect(reasons).to.deep.equal(['wrong', 'wrong', 'wrong', 'wrong', 'exhausted']);
    const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: good }).expect(400);
    expect(res.body.error).to.include({ code: 'INVALID_CODE', reason: 'exhausted' });
    const row = await db('users').where({ id: userId }).first();
    expect(row.email_verified_at).to.equal(null);
  });

  it('eight concurrent wrong codes: exactly four answer wrong and four exhausted; attempts stop at five', async () => {
    const { agent, csrf, email, userId } = await signUp();
    const good = mail.lastCode(email);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: wrongCode(good) })),
    );
    for (const r of answers) expect(r.status, JSON.stringify(r.body)).to.equal(400);
    const reasons = answers.map((r) => r.body.error.reason as string).sort();
    expect(reasons).to.deep.equal(['exhausted', 'exhausted', 'exhausted', 'exhausted', 'wrong', 'wrong', 'wrong', 'wrong']);
    const row = await db('auth_codes').where({ user_id: userId, purpose: 'verify_email' }).first();
    expect(row.attempts).to.equal(5);
    const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: good }).expect(400);
    expect(res.body.error.reason).to.equal('exhausted');
  });

  it('answers INVALID_CODE reason expired after 24 hours', async () => {
    const { email, userId } = await signUp();
    const code = mail.lastCode(email);
    clock.advance(24 * 3600_000 + 1000);
    // The sign-up session has gone idle by now; a fresh sign-in carries the try.
    const { agent, csrf } = await freshSession(email);
    const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code }).expect(400);
    expect(res.body.error).to.include({ code: 'INVALID_CODE', reason: 'expired' });
    expect((await db('users').where({ id: userId }).first()).email_verified_at).to.equal(null);
  });

  it('still accepts the code just before 24 hours have passed', async () => {
    const { email } = await signUp();
    const code = mail.lastCode(email);
    clock.advance(24 * 3600_000 - 60_000);
    const { agent, csrf } = await freshSession(email);
    const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code }).expect(200);
    expect(res.body.data.user.is_verified).to.equal(true);
  });

  it('answers 400 INVALID_BODY for a code that is not 6 digits', async () => {
    const { agent, csrf } = await signUp();
    for (const code of ['12345', '1234567', 'abcdef']) {
      const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code }).expect(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(res.body.error.details.fieldErrors).to.have.property('code');
    }
  });

  it('needs credentials (401 UNAUTHORIZED) and the CSRF header with a session (403 CSRF_FAILED)', async () => {
    const { agent, email } = await signUp();
    const code = mail.lastCode(email);
    const anon = await newAgent().post('/v1/auth/verify-email').send({ code }).expect(401);
    expect(anon.body.error.code).to.equal('UNAUTHORIZED');
    const noCsrf = await agent.post('/v1/auth/verify-email').send({ code }).expect(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_FAILED');
  });

  it('resend issues a new code and the old one stops working', async () => {
    const { agent, csrf, email } = await signUp();
    const first = mail.lastCode(email);
    let second = first;
    // A resend could draw the same six digits by chance (1 in a million); resend again then.
    for (let i = 0; i < 3 && second === first; i++) {
      const res = await agent.post('/v1/auth/verify-email/resend').set('X-CSRF-Token', csrf).send({}).expect(200);
      expect(res.body.data).to.deep.equal({ sent: true });
      await runJobs(['mail']);
      second = mail.lastCode(email);
    }
    expect(mail.to(email).length).to.be.greaterThan(1);
    expect(second).to.not.equal(first);

    const old = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: first }).expect(400);
    expect(old.body.error.code).to.equal('INVALID_CODE');
    const res = await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: second }).expect(200);
    expect(res.body.data.user.is_verified).to.equal(true);
  });

  it('resend is limited to 5 an hour per account (429 RATE_LIMITED)', async () => {
    const { agent, csrf } = await signUp();
    for (let i = 0; i < 5; i++) await agent.post('/v1/auth/verify-email/resend').set('X-CSRF-Token', csrf).send({}).expect(200);
    const res = await agent.post('/v1/auth/verify-email/resend').set('X-CSRF-Token', csrf).send({}).expect(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
    expect(res.headers['retry-after']).to.match(/^\d+$/);
  });

  it('resend on a verified account answers 409 ALREADY_VERIFIED and sends nothing', async () => {
    const { agent, csrf, email } = await signUp();
    await agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: mail.lastCode(email) }).expect(200);
    const res = await agent.post('/v1/auth/verify-email/resend').set('X-CSRF-Token', csrf).send({}).expect(409);
    expect(res.body.error.code).to.equal('ALREADY_VERIFIED');
    await runJobs(['mail']);
    expect(mail.to(email)).to.have.length(1);
  });
});

import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { consumeCode, findTicket } from '../../../shared/auth/codes.js';
import * as throttle from '../../../shared/auth/login-throttle.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { redis } from '../../../shared/redis.js';
import { createUser } from '../../factories/users.js';
import { botCheckOff, freshIp, postLogin, proxiedApi, type Client } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';

describe('two-step sign-in by e-mail', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());

  async function startLogin(email: string, password: string) {
    const agent = supertest.agent(createApp().callback());
    const res = await agent.post('/v1/auth/login').send({ email, password }).expect(200);
    expect(res.body.data).to.include({ requires_2fa: true, method: 'email' });
    expect(res.headers['set-cookie']).to.equal(undefined);
    await runJobs(['mail']);
    return { agent, ticket: res.body.data.ticket as string };
  }

  it('signs in with the e-mailed code and sets the session cookie', async () => {
    const { user, password } = await createUser({ twoFactor: 'email' });
    const { agent, ticket } = await startLogin(user.email, password);
    const code = mail.lastCode(user.email);
    const res = await agent.post('/v1/auth/login/2fa').send({ ticket, code }).expect(200);
    expect(res.body.data.user.id).to.equal(user.id);
    expect(res.body.data.csrf_token).to.be.a('string');
    expect(res.headers['set-cookie']?.[0]).to.match(/^escrow_session=.+; path=\/; expires=.+; samesite=lax; httponly$/);
    await agent.get('/v1/auth/me').expect(200);
  });

  it('answers INVALID_CODE wrong, then exhausted after five wrong codes', async () => {
    const { user, password } = await createUser({ twoFactor: 'email' });
    const { agent, ticket } = await startLogin(user.email, password);
    const good = mail.lastCode(user.email);
    const bad = good === '000000' ? '111111' : '000000';
    const reasons: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await agent.post('/v1/auth/login/2fa').send({ ticket, code: bad }).expect(401);
      expect(res.body.error.code).to.equal('INVALID_CODE');
      reasons.push(res.body.error.reason as string);
    }
    expect(reasons).to.deep.equal(['wrong', 'wrong', 'wrong', 'wrong', 'exhausted']);
    const res = await agent.post('/v1/auth/login/2fa').send({ ticket, code: good }).expect(401);
    expect(res.body.error).to.include({ code: 'INVALID_CODE', reason: 'exhausted' });
  });

  it('answers INVALID_CODE expired after 10 minutes and INVALID_TICKET after 30', async () => {
    const { user, password } = await createUser({ twoFactor: 'email' });
    const { agent, ticket } = await startLogin(user.email, password);
    const code = mail.lastCode(user.email);
    clock.advance(10 * 60_000 + 1);
    const expired = await agent.post('/v1/auth/login/2fa').send({ ticket, code }).expect(401);
    expect(expired.body.error).to.include({ code: 'INVALID_CODE', reason: 'expired' });
    clock.advance(20 * 60_000);
    const gone = await agent.post('/v1/auth/login/2fa').send({ ticket, code }).expect(401);
    expect(gone.body.error.code).to.equal('INVALID_TICKET');
  });
});

describe('two-step sign-in: guessing and the sign-in ladder', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());
  botCheckOff();

  async function startLogin(app: Client, email: string, password: string, ip: string) {
    const res = await postLogin(app, { email, password }, ip);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.include({ requires_2fa: true, method: 'email' });
    await runJobs(['mail']);
    return { ticket: res.body.data.ticket as string, code: mail.lastCode(email) };
  }

  const wrongFor = (code: string) => (code === '000000' ? '111111' : '000000');

  it('the right code checked against a row read before a burst of wrong codes is refused (attempts counted atomically)', async () => {
    // The interleaving of a parallel burst, made deterministic: one request reads the
    // ticket, 24 others spend every attempt, then the first one compares its (right) code.
    const { user, password } = await createUser({ twoFactor: 'email' });
    const app = proxiedApi();
    const { ticket, code } = await startLogin(app, user.email, password, freshIp());
    const stale = await findTicket(db, ticket);
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => app.post('/v1/auth/login/2fa').set('X-Forwarded-For', freshIp()).send({ ticket, code: wrongFor(code) })),
    );
    for (const r of answers) expect(r.body.error?.code, JSON.stringify(r.body)).to.equal('INVALID_CODE');
    let caught: unknown;
    try {
      await consumeCode(db, stale, code, 'unauthorized');
    } catch (err) {
      caught = err;
    }
    expect(caught, 'the right code was accepted after 24 wrong guesses').to.be.instanceOf(AppError);
    expect(caught).to.include({ code: 'INVALID_CODE' });
    expect((caught as AppError).extras).to.deep.equal({ reason: 'exhausted' });
    const row = await db('auth_codes').where({ id: stale.id }).first();
    expect(row).to.include({ attempts: 5, consumed_at: null });
  });

  it('25 parallel wrong codes exhaust the ticket: the right code then answers INVALID_CODE exhausted and no session starts', async () => {
    const { user, password } = await createUser({ twoFactor: 'email' });
    const app = proxiedApi();
    const { ticket, code } = await startLogin(app, user.email, password, freshIp());
    const answers = await Promise.all(
      Array.from({ length: 25 }, () => app.post('/v1/auth/login/2fa').set('X-Forwarded-For', freshIp()).send({ ticket, code: wrongFor(code) })),
    );
    const reasons = answers.map((r) => `${r.status} ${r.body.error?.code} ${r.body.error?.reason}`);
    expect(reasons.filter((r) => r === '401 INVALID_CODE wrong')).to.have.length(4);
    expect(reasons.filter((r) => r === '401 INVALID_CODE exhausted')).to.have.length(21);
    const right = await app.post('/v1/auth/login/2fa').set('X-Forwarded-For', freshIp()).send({ ticket, code });
    expect(right.status).to.equal(401);
    expect(right.body.error).to.include({ code: 'INVALID_CODE', reason: 'exhausted' });
    expect(right.headers['set-cookie']).to.equal(undefined);
    expect(await db('sessions').where({ user_id: user.id }).count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('the right code on the fifth try still works (each try, right or wrong, is one of five)', async () => {
    const { user, password } = await createUser({ twoFactor: 'email' });
    const app = proxiedApi();
    const { ticket, code } = await startLogin(app, user.email, password, freshIp());
    for (let i = 0; i < 4; i++) await app.post('/v1/auth/login/2fa').send({ ticket, code: wrongFor(code) }).expect(401);
    const res = await app.post('/v1/auth/login/2fa').send({ ticket, code });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    // A used ticket is gone.
    const again = await app.post('/v1/auth/login/2fa').send({ ticket, code });
    expect(again.body.error.code).to.equal('INVALID_TICKET');
  });

  it('a correct password alone does not clear the failed sign-in counts of the address or the e-mail', async () => {
    const { user, password } = await createUser({ twoFactor: 'email' });
    const app = proxiedApi();
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const res = await postLogin(app, { email: user.email, password: 'Wrong1Horse' }, ip);
      expect(res.body.error.code).to.equal('INVALID_CREDENTIALS');
    }
    await startLogin(app, user.email, password, ip);
    const counts = await throttle.readCounts(redis, ip, user.email);
    expect({ ip: counts.ip, email: counts.email }).to.deep.equal({ ip: 6, email: 6 });
    // The next try (even with the right password) meets the lock.
    const locked = await postLogin(app, { email: user.email, password }, ip);
    expect(locked.status, JSON.stringify(locked.body)).to.equal(423);
    expect(locked.body.error.code).to.equal('ACCOUNT_LOCKED');
  });

  it('the second step, once passed, gives the sign-in back and clears the e-mail’s count', async () => {
    const { user, password } = await createUser({ twoFactor: 'email' });
    const app = proxiedApi();
    const ip = freshIp();
    for (let i = 0; i < 5; i++) await postLogin(app, { email: user.email, password: 'Wrong1Horse' }, ip).expect(401);
    const { ticket, code } = await startLogin(app, user.email, password, ip);
    expect(await throttle.readCounts(redis, ip, user.email)).to.include({ ip: 6, email: 6 });
    // The ticket was granted below the lock, so its own pending attempt does not lock it.
    await app.post('/v1/auth/login/2fa').set('X-Forwarded-For', ip).send({ ticket, code }).expect(200);
    expect(await throttle.readCounts(redis, ip, user.email)).to.include({ ip: 5, email: 0 });
  });
});

describe('two-step sign-in: admins in production', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());
  let savedEnv = config.nodeEnv;
  beforeEach(() => {
    savedEnv = config.nodeEnv;
  });
  afterEach(() => {
    config.nodeEnv = savedEnv;
  });

  /** Runs `fn` with NODE_ENV=production (the app is created before, as at start-up). */
  async function inProduction<T>(fn: () => Promise<T>): Promise<T> {
    config.nodeEnv = 'production';
    try {
      return await fn();
    } finally {
      config.nodeEnv = savedEnv;
    }
  }

  for (const method of ['none', 'totp'] as const) {
    it(`an admin whose two_factor_method is ${method} must pass the e-mailed code step`, async () => {
      const { user, password } = await createUser({ role: 'admin', twoFactor: method });
      const agent = supertest.agent(createApp().callback());
      const res = await inProduction(() => agent.post('/v1/auth/login').send({ email: user.email, password }));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.include({ requires_2fa: true, method: 'email' });
      expect(res.headers['set-cookie']).to.equal(undefined);
      await runJobs(['mail']);
      const code = mail.lastCode(user.email);
      const done = await inProduction(() => agent.post('/v1/auth/login/2fa').send({ ticket: res.body.data.ticket, code }));
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
      expect(done.body.data.user).to.include({ id: user.id, role: 'admin' });
    });
  }

  it('outside production an admin without two-step sign-in gets a session at once; normal users in production too', async () => {
    const { user: admin, password } = await createUser({ role: 'admin' });
    const direct = await supertest(createApp().callback()).post('/v1/auth/login').send({ email: admin.email, password });
    expect(direct.status).to.equal(200);
    expect(direct.body.data.user.id).to.equal(admin.id);

    const { user } = await createUser();
    const app = supertest(createApp().callback());
    const res = await inProduction(() => app.post('/v1/auth/login').send({ email: user.email, password }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.user.id).to.equal(user.id);
  });
});

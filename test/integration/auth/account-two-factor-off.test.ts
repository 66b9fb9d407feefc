import { expect } from 'chai';
import type { Response } from 'supertest';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { createUser, signIn } from '../../factories/users.js';
import { bearer, newAgent } from '../../helpers/auth-account-support.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

async function methodOf(userId: string): Promise<string> {
  return ((await db('users').where({ id: userId }).first()) as { two_factor_method: string }).two_factor_method;
}

describe('accounts: turning two-step sign-in off (PATCH /v1/auth/me two_factor_method: none)', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());

  /** A user with two-step sign-in on and a personal key (a key skips the code step). */
  async function setup(options: Parameters<typeof createUser>[0] = {}) {
    const { user, password } = await createUser({ twoFactor: 'email', ...options });
    const key = await issueKey(user.id);
    const patch = (body: object) => newAgent().patch('/v1/auth/me').set(...bearer(key)).send(body);
    return { user, password, key, patch };
  }

  it('without current_password answers 400 INVALID_BODY naming it, and two-step sign-in stays on', async () => {
    const { user, patch } = await setup();
    const res = await patch({ two_factor_method: 'none' });
    expectError(res, 400, 'INVALID_BODY');
    expect(res.body.error.details.fieldErrors).to.have.property('current_password');
    expectError(await patch({ two_factor_method: 'none', current_password: '' }), 400, 'INVALID_BODY');
    expect(await methodOf(user.id)).to.equal('email');
  });

  it('with a wrong current_password answers 401 INVALID_CREDENTIALS, changes nothing and mails nothing', async () => {
    const { user, patch } = await setup();
    expectError(await patch({ two_factor_method: 'none', current_password: 'Wrong1Password', full_name: 'Changed' }), 401, 'INVALID_CREDENTIALS');
    const row = await db('users').where({ id: user.id }).first();
    expect(row).to.include({ two_factor_method: 'email', full_name: user.full_name });
    await runJobs(['mail']);
    expect(mail.to(user.email)).to.have.length(0);
  });

  it('with the right current_password turns it off and e-mails the owner', async () => {
    const { user, password, patch } = await setup();
    const res = await patch({ two_factor_method: 'none', current_password: password });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.user.two_factor_method).to.equal('none');
    expect(JSON.stringify(res.body)).to.not.include(password);
    expect(await methodOf(user.id)).to.equal('none');
    await runJobs(['mail']);
    const mails = mail.to(user.email);
    expect(mails).to.have.length(1);
    expect(mails[0]!.subject).to.match(/two-step sign-in .*off/i);
    expect(mails[0]!.text).to.not.include(password);
    // Sign-in now needs no code.
    const login = await newAgent().post('/v1/auth/login').send({ email: user.email, password }).expect(200);
    expect(login.body.data.user.id).to.equal(user.id);
  });

  it('a session needs it too (and the CSRF header); the answer is the same', async () => {
    const { user, password } = await createUser();
    const agent = newAgent();
    const csrf = await signIn(agent, user.email, password);
    await agent.patch('/v1/auth/me').set('X-CSRF-Token', csrf).send({ two_factor_method: 'email' }).expect(200);
    expectError(await agent.patch('/v1/auth/me').set('X-CSRF-Token', csrf).send({ two_factor_method: 'none' }), 400, 'INVALID_BODY');
    await agent.patch('/v1/auth/me').set('X-CSRF-Token', csrf).send({ two_factor_method: 'none', current_password: password }).expect(200);
    expect(await methodOf(user.id)).to.equal('none');
  });

  it('current_password is accepted and ignored when turning it on or for other fields (even when wrong); no e-mail', async () => {
    const { user, patch } = await setup({ twoFactor: 'none' });
    const on = await patch({ two_factor_method: 'email', current_password: 'Whatever1' });
    expect(on.status, JSON.stringify(on.body)).to.equal(200);
    expect(on.body.data.user.two_factor_method).to.equal('email');
    const other = await patch({ full_name: 'Budi', current_password: 'Whatever1' });
    expect(other.status, JSON.stringify(other.body)).to.equal(200);
    expect(other.body.data.user.full_name).to.equal('Budi');
    await runJobs(['mail']);
    expect(mail.to(user.email)).to.have.length(0);
  });

  it('setting none when it is already off sends no e-mail', async () => {
    const { user, password, patch } = await setup({ twoFactor: 'none' });
    await patch({ two_factor_method: 'none', current_password: password }).expect(200);
    await runJobs(['mail']);
    expect(mail.to(user.email)).to.have.length(0);
  });

  it('password guesses are limited: after 10 tries in 15 minutes the next answers 429 RATE_LIMITED', async () => {
    const { user, password, patch } = await setup();
    for (let i = 0; i < 10; i++) expectError(await patch({ two_factor_method: 'none', current_password: `Wrong${i}Guess` }), 401, 'INVALID_CREDENTIALS');
    const res = await patch({ two_factor_method: 'none', current_password: password });
    expectError(res, 429, 'RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
    expect(await methodOf(user.id)).to.equal('email');
    // Other profile changes are not limited by it.
    await patch({ full_name: 'Still Fine' }).expect(200);
  });

  it('in production an admin cannot turn it off (403 TWO_FACTOR_REQUIRED); outside production an admin can', async () => {
    const { user, password, patch } = await setup({ role: 'admin' });
    const saved = config.nodeEnv;
    let res: Response;
    config.nodeEnv = 'production';
    try {
      res = await patch({ two_factor_method: 'none', current_password: password });
    } finally {
      config.nodeEnv = saved;
    }
    expectError(res, 403, 'TWO_FACTOR_REQUIRED');
    expect(await methodOf(user.id)).to.equal('email');
    await patch({ two_factor_method: 'none', current_password: password }).expect(200);
    expect(await methodOf(user.id)).to.equal('none');
  });
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { LOGIN_WINDOW_SECONDS } from '../../../shared/auth/login-throttle.js';
import { createUser } from '../../factories/users.js';
import { botCheckOff, countRows, freshIp, postLogin, proxiedApi, sessionSetCookie, type Client } from '../../helpers/auth-signin-util.js';

const WRONG = 'Wrong1Horse';
const unknownEmail = () => `nobody-${randomUUID()}@example.com`;

function expectInvalidCredentials(res: Response, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(401);
  expect(res.body.error.code, label).to.equal('INVALID_CREDENTIALS');
  expect(res.body.error.requires_captcha, label).to.equal(false);
}

function expectAccountLocked(res: Response, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(423);
  expect(res.body.success, label).to.equal(false);
  expect(res.body.error.code, label).to.equal('ACCOUNT_LOCKED');
  expect(sessionSetCookie(res), label).to.equal(undefined);
}

function expectLoginLocked(res: Response, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(429);
  expect(res.body.error.code, label).to.equal('LOGIN_LOCKED');
  const retryAfter = res.headers['retry-after'];
  expect(retryAfter, label).to.match(/^\d+$/);
  expect(Number(retryAfter), label).to.be.greaterThan(0).and.at.most(LOGIN_WINDOW_SECONDS);
  expect(Number(retryAfter), label).to.be.at.most(900);
  expect(res.body.error.retry_after, label).to.equal(Number(retryAfter));
  expect(sessionSetCookie(res), label).to.equal(undefined);
}

describe('sign-in: lockout ladder (bot check off)', () => {
  let app: Client;
  botCheckOff();
  beforeEach(() => {
    app = proxiedApi();
  });

  it('one address, one e-mail: 401 x5, 423 on the 6th failure, 423 for attempts 7-10 (right password too), 429 LOGIN_LOCKED on the 11th', async () => {
    const { user, password } = await createUser();
    const ip = freshIp();
    for (let i = 1; i <= 5; i++) {
      expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, ip), `failure ${i}`);
    }
    expectAccountLocked(await postLogin(app, { email: user.email, password: WRONG }, ip), 'failure 6');
    expectAccountLocked(await postLogin(app, { email: user.email, password }, ip), 'attempt 7 (right password)');
    expectAccountLocked(await postLogin(app, { email: user.email, password: WRONG }, ip), 'attempt 8');
    expectAccountLocked(await postLogin(app, { email: user.email, password }, ip), 'attempt 9 (right password)');
    expectAccountLocked(await postLogin(app, { email: user.email, password }, ip), 'attempt 10 (right password)');
    expectLoginLocked(await postLogin(app, { email: user.email, password }, ip), 'attempt 11 (right password)');
    // The address stays locked, whatever e-mail it tries.
    const { user: other, password: otherPassword } = await createUser();
    expectLoginLocked(await postLogin(app, { email: other.email, password: otherPassword }, ip), 'other account from the locked address');
    expect(await countRows('sessions')).to.equal(0);
  });

  it('locks the e-mail from any address: six failures from six addresses lock it, and a seventh address gets 423 with the right password', async () => {
    const { user, password } = await createUser();
    for (let i = 1; i <= 5; i++) {
      expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), `failure ${i}`);
    }
    expectAccountLocked(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), 'failure 6 from a new address');
    expectAccountLocked(await postLogin(app, { email: user.email, password }, freshIp()), 'right password from a new address');
    // The lock is on this e-mail only: another account signs in from a new address.
    const { user: other, password: otherPassword } = await createUser();
    await postLogin(app, { email: other.email, password: otherPassword }, freshIp()).expect(200);
    expect(await countRows('sessions', { user_id: user.id })).to.equal(0);
  });

  it('counts per address across e-mails: failures on six different e-mails from one address lock that address', async () => {
    const ip = freshIp();
    const { user, password } = await createUser();
    for (let i = 1; i <= 5; i++) {
      expectInvalidCredentials(await postLogin(app, { email: unknownEmail(), password: WRONG }, ip), `failure ${i} (new e-mail)`);
    }
    expectAccountLocked(await postLogin(app, { email: unknownEmail(), password: WRONG }, ip), 'failure 6 (new e-mail)');
    expectAccountLocked(await postLogin(app, { email: user.email, password }, ip), 'attempt 7: a real account with the right password');
    // That account is not locked elsewhere: its e-mail has one refused attempt only.
    await postLogin(app, { email: user.email, password }, freshIp()).expect(200);
    for (let i = 8; i <= 10; i++) {
      expectAccountLocked(await postLogin(app, { email: unknownEmail(), password: WRONG }, ip), `attempt ${i}`);
    }
    expectLoginLocked(await postLogin(app, { email: unknownEmail(), password: WRONG }, ip), 'attempt 11');
  });

  it('a successful sign-in resets the e-mail count', async () => {
    const { user, password } = await createUser();
    // Short version: 2 failures, success, 2 failures: still plain 401 without captcha.
    const ip = freshIp();
    for (let i = 1; i <= 2; i++) expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, ip), `failure ${i}`);
    await postLogin(app, { email: user.email, password }, ip).expect(200);
    for (let i = 1; i <= 2; i++) expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, ip), `after success ${i}`);

    // Long version from separate addresses (so only the e-mail count matters): five failures,
    // success, five failures are all 401. Without the reset the first one after the success
    // would be the e-mail's 6th failure and answer 423.
    const { user: second, password: secondPassword } = await createUser();
    for (let i = 1; i <= 5; i++) {
      expectInvalidCredentials(await postLogin(app, { email: second.email, password: WRONG }, freshIp()), `second: failure ${i}`);
    }
    await postLogin(app, { email: second.email, password: secondPassword }, freshIp()).expect(200);
    for (let i = 1; i <= 5; i++) {
      expectInvalidCredentials(await postLogin(app, { email: second.email, password: WRONG }, freshIp()), `second: after success ${i}`);
    }
    expectAccountLocked(await postLogin(app, { email: second.email, password: WRONG }, freshIp()), 'second: 6th failure after success');
  });

  it('counts e-mails case-insensitively', async () => {
    const { user, password } = await createUser();
    const variants = [user.email, user.email.toUpperCase(), user.email.replace(/^./, (c) => c.toUpperCase())];
    for (let i = 1; i <= 5; i++) {
      expectInvalidCredentials(await postLogin(app, { email: variants[i % 3]!, password: WRONG }, freshIp()), `failure ${i}`);
    }
    expectAccountLocked(await postLogin(app, { email: variants[2]!, password: WRONG }, freshIp()), 'failure 6');
    expectAccountLocked(await postLogin(app, { email: user.email.toUpperCase(), password }, freshIp()), 'right password, upper case');
  });
  it('holds under a parallel burst: attempts are counted before the password is checked', async () => {
    const { user, password } = await createUser();
    for (let i = 1; i <= 5; i++) {
      expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), `failure ${i}`);
    }
    // Eight wrong guesses at once from eight addresses, and the right password a moment later,
    // while the burst is still hashing. Counted before the check, the burst has already
    // locked the e-mail; counted after it, the right password would slip through.
    const burst = Array.from({ length: 8 }, () => postLogin(app, { email: user.email, password: WRONG }, freshIp()).then((r) => r));
    await new Promise((resolve) => setTimeout(resolve, 15));
    expectAccountLocked(await postLogin(app, { email: user.email, password }, freshIp()), 'right password during the burst');
    (await Promise.all(burst)).forEach((res, i) => expectAccountLocked(res, `burst ${i + 1}`));
    expect(await countRows('sessions')).to.equal(0);
  });

  it('does not count a successful sign-in against the address', async () => {
    const ip = freshIp();
    for (let i = 0; i < 12; i++) {
      const { user, password } = await createUser();
      await postLogin(app, { email: user.email, password }, ip).expect(200);
    }
  });
});

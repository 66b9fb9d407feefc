import { expect } from 'chai';
import type { Response } from 'supertest';
import { config } from '../../../shared/config.js';
import { createUser } from '../../factories/users.js';
import { api } from '../../helpers/app.js';
import { closedPort, countRows, freshIp, postLogin, proxiedApi, sessionSetCookie, type Client } from '../../helpers/auth-signin-util.js';
import { FakeTurnstile, GOOD_TOKEN } from '../../helpers/turnstile.js';

const WRONG = 'Wrong1Horse';

function expectInvalidCredentials(res: Response, requiresCaptcha: boolean, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(401);
  expect(res.body.error.code, label).to.equal('INVALID_CREDENTIALS');
  expect(res.body.error.requires_captcha, label).to.equal(requiresCaptcha);
}

describe('sign-in: bot check (Turnstile)', () => {
  const turnstile = new FakeTurnstile();
  let app: Client;

  beforeEach(async () => {
    await turnstile.start();
    turnstile.requests.length = 0;
    app = proxiedApi();
  });
  afterEach(async () => {
    await turnstile.stop();
  });

  describe('GET /v1/public/auth-config', () => {
    it('reports the bot check on with its site key, and google off', async () => {
      const res = await api().get('/v1/public/auth-config').expect(200);
      expect(res.body).to.deep.equal({
        success: true,
        data: { turnstile: { enabled: true, site_key: 'test-site-key' }, google: { enabled: false } },
      });
    });

    it('reports the bot check off once the secret is gone; google stays off (federated sign-in is not built)', async () => {
      await turnstile.stop();
      const res = await api().get('/v1/public/auth-config').expect(200);
      expect(res.body.data.turnstile).to.deep.equal({ enabled: false, site_key: '' });
      expect(res.body.data.google).to.deep.equal({ enabled: false });
    });
  });

  it('asks for the check from the 3rd failure: TURNSTILE_REQUIRED without a token, TURNSTILE_FAILED with a bad one, sign-in with a good one', async () => {
    const { user, password } = await createUser();
    const ip = '198.51.100.23';
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, ip), false, 'failure 1');
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, ip), false, 'failure 2');
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, ip), true, 'failure 3');
    expect(turnstile.requests, 'no token was sent yet').to.have.length(0);

    const missing = await postLogin(app, { email: user.email, password }, ip);
    expect(missing.status).to.equal(400);
    expect(missing.body.error).to.include({ code: 'TURNSTILE_REQUIRED', requires_captcha: true });
    expect(sessionSetCookie(missing)).to.equal(undefined);

    const empty = await postLogin(app, { email: user.email, password, turnstile_token: '' }, ip);
    expect(empty.status).to.equal(400);
    expect(empty.body.error).to.include({ code: 'TURNSTILE_REQUIRED', requires_captcha: true });

    const bad = await postLogin(app, { email: user.email, password, turnstile_token: 'not-the-token' }, ip);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('TURNSTILE_FAILED');
    expect(sessionSetCookie(bad)).to.equal(undefined);
    expect(await countRows('sessions')).to.equal(0);

    const good = await postLogin(app, { email: user.email, password, turnstile_token: GOOD_TOKEN }, ip);
    expect(good.status, JSON.stringify(good.body)).to.equal(200);
    expect(good.body.data.user.id).to.equal(user.id);
    expect(sessionSetCookie(good)).to.be.a('string');

    expect(turnstile.requests).to.have.length(2);
    const [first, second] = turnstile.requests;
    expect(first!.get('response')).to.equal('not-the-token');
    expect(second!.get('secret')).to.equal('test-secret');
    expect(second!.get('response')).to.equal(GOOD_TOKEN);
    expect(second!.get('remoteip')).to.equal(ip);
  });

  it('with a good token a wrong password is still 401, and requires_captcha stays true', async () => {
    const { user } = await createUser();
    const ip = freshIp();
    for (let i = 1; i <= 3; i++) await postLogin(app, { email: user.email, password: WRONG }, ip).expect(401);
    const res = await postLogin(app, { email: user.email, password: WRONG, turnstile_token: GOOD_TOKEN }, ip);
    expectInvalidCredentials(res, true, 'wrong password with a good token');
  });

  it('counts the e-mail across addresses: after three failures from three addresses a fourth address needs the token', async () => {
    const { user, password } = await createUser();
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), false, 'failure 1');
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), false, 'failure 2');
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), true, 'failure 3');
    const res = await postLogin(app, { email: user.email, password }, freshIp());
    expect(res.status).to.equal(400);
    expect(res.body.error).to.include({ code: 'TURNSTILE_REQUIRED', requires_captcha: true });
  });

  it('a successful sign-in resets the e-mail count: 2 failures, success, 2 failures are 401 without captcha', async () => {
    const { user, password } = await createUser();
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), false, 'failure 1');
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), false, 'failure 2');
    await postLogin(app, { email: user.email, password }, freshIp()).expect(200);
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), false, 'after success 1');
    expectInvalidCredentials(await postLogin(app, { email: user.email, password: WRONG }, freshIp()), false, 'after success 2');
  });

  it('fails closed when siteverify cannot be reached: TURNSTILE_FAILED even with the good token and password', async () => {
    const { user, password } = await createUser();
    config.turnstileVerifyUrl = `http://127.0.0.1:${await closedPort()}/siteverify`;
    const res = await postLogin(app, { email: user.email, password, turnstile_token: GOOD_TOKEN }, freshIp());
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('TURNSTILE_FAILED');
    expect(sessionSetCookie(res)).to.equal(undefined);
    expect(await countRows('sessions')).to.equal(0);
  });
});

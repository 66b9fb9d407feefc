import { expect } from 'chai';
import { createUser } from '../../factories/users.js';
import { botCheckOff, freshIp, postLogin, proxiedApi, type Client } from '../../helpers/auth-signin-util.js';

describe('sign-in: per-address request limits (429 RATE_LIMITED)', () => {
  let app: Client;
  botCheckOff();
  beforeEach(() => {
    app = proxiedApi();
  });

  it('POST /v1/auth/login: 30 per minute per address, even when every one succeeds', async () => {
    const { user, password } = await createUser();
    const ip = freshIp();
    for (let i = 1; i <= 30; i++) await postLogin(app, { email: user.email, password }, ip).expect(200);
    const res = await postLogin(app, { email: user.email, password }, ip);
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0).and.at.most(60);
    await postLogin(app, { email: user.email, password }, freshIp()).expect(200);
  });

  it('POST /v1/auth/login/2fa: 30 per minute per address, so tickets cannot be guessed in bulk', async () => {
    const ip = freshIp();
    for (let i = 1; i <= 30; i++) {
      const res = await app.post('/v1/auth/login/2fa').set('X-Forwarded-For', ip).send({ ticket: `guess-${i}`, code: '123456' });
      expect(res.status, `try ${i}`).to.equal(401);
      expect(res.body.error.code).to.equal('INVALID_TICKET');
    }
    const res = await app.post('/v1/auth/login/2fa').set('X-Forwarded-For', ip).send({ ticket: 'guess-31', code: '123456' });
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
  });
});

describe('accounts: per-address limits on the password routes (429 RATE_LIMITED)', () => {
  it('POST /v1/auth/password/forgot: 10 per 15 minutes per address', async () => {
    const app = proxiedApi();
    const ip = freshIp();
    for (let i = 1; i <= 10; i++) {
      await app.post('/v1/auth/password/forgot').set('X-Forwarded-For', ip).send({ email: `n${i}@example.com` }).expect(200);
    }
    const res = await app.post('/v1/auth/password/forgot').set('X-Forwarded-For', ip).send({ email: 'n11@example.com' });
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
  });

  it('POST /v1/auth/password/reset: 20 per 15 minutes per address', async () => {
    const app = proxiedApi();
    const ip = freshIp();
    for (let i = 1; i <= 20; i++) {
      const res = await app.post('/v1/auth/password/reset').set('X-Forwarded-For', ip).send({ token: `guess-${i}`, password: 'Str0ngPassword' });
      expect(res.body.error.code, `try ${i}`).to.equal('INVALID_RESET_TOKEN');
    }
    const res = await app.post('/v1/auth/password/reset').set('X-Forwarded-For', ip).send({ token: 'guess-21', password: 'Str0ngPassword' });
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
  });
});

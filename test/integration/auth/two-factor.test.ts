import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { createUser } from '../../factories/users.js';
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

import { expect } from 'chai';
import type { Response } from 'supertest';
import { db } from '../../../shared/db.js';
import { captureLogs, newAgent, sessionTokenOf, signUpBody, type TestAgent } from '../../helpers/auth-account-support.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';

interface Recorded {
  label: string;
  status: number;
  body: string;
  /** Every header except Set-Cookie, as "name: value" lines. */
  headers: string;
  setCookie: string;
}

describe('accounts: secrets never leak (responses, e-mails, logs)', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());

  it('a whole account flow shows no password, hash, session token or API key where it must not', async () => {
    const recorded: Recorded[] = [];
    const sessionTokens = new Set<string>();
    const passwords = { signUp: 'First9Secret', wrong: 'Wrong9Guess', reset: 'Second9Secret', changed: 'Third9Secret', weak: 'weakweak' };
    let apiKey = '';
    let rotateLabel = '';
    let resetToken = '';
    let ticket = '';
    const body = signUpBody({ password: passwords.signUp });
    const email = body.email;

    function rec(label: string, res: Response): Response {
      const headers = Object.entries(res.headers)
        .filter(([name]) => name.toLowerCase() !== 'set-cookie')
        .map(([name, value]) => `${name}: ${String(value)}`)
        .join('\n');
      const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).join('\n');
      const token = sessionTokenOf(res);
      if (token) sessionTokens.add(token);
      recorded.push({ label, status: res.status, body: res.text ?? '', headers, setCookie });
      return res;
    }

    async function step(label: string, status: number, send: () => Promise<Response>): Promise<Response> {
      const res = rec(label, await send());
      expect(res.status, `${label}: ${res.text}`).to.equal(status);
      return res;
    }

    const logs = await captureLogs(async () => {
      // Sign-up and e-mail verification.
      const agent: TestAgent = newAgent();
      const reg = await step('register', 201, () => agent.post('/v1/auth/register').send(body));
      let csrf = reg.body.data.csrf_token as string;
      await runJobs(['mail']);
      await step('verify wrong', 400, () => agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: mail.lastCode(email) === '000000' ? '111111' : '000000' }));
      await step('verify', 200, () => agent.post('/v1/auth/verify-email').set('X-CSRF-Token', csrf).send({ code: mail.lastCode(email) }));
      await step('me', 200, () => agent.get('/v1/auth/me'));

      // Two-step sign-in.
      await step('2fa on', 200, () => agent.patch('/v1/auth/me').set('X-CSRF-Token', csrf).send({ two_factor_method: 'email' }));
      await step('logout', 200, () => agent.post('/v1/auth/logout').set('X-CSRF-Token', csrf).send());
      await step('login wrong password', 401, () => agent.post('/v1/auth/login').send({ email, password: passwords.wrong }));
      const first = await step('login step 1', 200, () => agent.post('/v1/auth/login').send({ email, password: passwords.signUp }));
      ticket = first.body.data.ticket as string;
      await runJobs(['mail']);
      await step('login 2fa wrong', 401, () => agent.post('/v1/auth/login/2fa').send({ ticket, code: mail.lastCode(email) === '000000' ? '111111' : '000000' }));
      const second = await step('login step 2', 200, () => agent.post('/v1/auth/login/2fa').send({ ticket, code: mail.lastCode(email) }));
      csrf = second.body.data.csrf_token as string;
      await step('2fa off', 200, () => agent.patch('/v1/auth/me').set('X-CSRF-Token', csrf).send({ two_factor_method: 'none', current_password: passwords.signUp }));

      // Personal key.
      rotateLabel = 'rotate';
      const rotated = await step(rotateLabel, 200, () => agent.post('/v1/auth/me/api-key/rotate').set('X-CSRF-Token', csrf).send({ label: 'laptop' }));
      apiKey = rotated.body.data.api_key as string;
      await step('key view', 200, () => agent.get('/v1/auth/me/api-key'));
      await step('me by key', 200, () => newAgent().get('/v1/auth/me').set('Authorization', `Bearer ${apiKey}`));
      await step('bad label by key', 400, () => newAgent().post('/v1/auth/me/api-key/rotate').set('Authorization', `Bearer ${apiKey}`).send({ label: '-bad' }));

      // Forgotten password.
      await step('forgot unknown', 200, () => newAgent().post('/v1/auth/password/forgot').send({ email: 'ghost@example.com' }));
      await step('forgot', 200, () => newAgent().post('/v1/auth/password/forgot').send({ email }));
      await runJobs(['mail']);
      resetToken = /token=([A-Za-z0-9_-]+)/.exec(mail.to(email).at(-1)!.text)![1]!;
      await step('reset weak', 400, () => newAgent().post('/v1/auth/password/reset').send({ token: resetToken, password: passwords.weak }));
      await step('reset', 200, () => newAgent().post('/v1/auth/password/reset').send({ token: resetToken, password: passwords.reset }));
      await step('reset again', 400, () => newAgent().post('/v1/auth/password/reset').send({ token: resetToken, password: passwords.reset }));
      await step('old session', 401, () => agent.get('/v1/auth/me/api-key'));

      // Change password.
      const again = newAgent();
      const login = await step('login after reset', 200, () => again.post('/v1/auth/login').send({ email, password: passwords.reset }));
      const csrf2 = login.body.data.csrf_token as string;
      await step('change wrong current', 401, () => again.post('/v1/auth/password').set('X-CSRF-Token', csrf2).send({ current_password: passwords.wrong, new_password: passwords.changed }));
      await step('change weak', 400, () => again.post('/v1/auth/password').set('X-CSRF-Token', csrf2).send({ current_password: passwords.reset, new_password: passwords.weak }));
      await step('change', 200, () => again.post('/v1/auth/password').set('X-CSRF-Token', csrf2).send({ current_password: passwords.reset, new_password: passwords.changed }));
      await step('me after change', 200, () => again.get('/v1/auth/me'));
      await step('revoked key', 401, () => newAgent().get('/v1/auth/me').set('Authorization', `Bearer ${apiKey}`));
      await runJobs(['mail']);
    });

    // What the database holds: every hash must stay there.
    const hashes: { name: string; value: string }[] = [];
    const add = (name: string, rows: Record<string, string | null>[], column: string) => {
      for (const r of rows) {
        const value = r[column];
        if (value) hashes.push({ name: `${name}.${column}`, value });
      }
    };
    add('auth_codes', await db('auth_codes').select('code_hash', 'ticket_hash'), 'code_hash');
    add('auth_codes', await db('auth_codes').select('code_hash', 'ticket_hash'), 'ticket_hash');
    add('sessions', await db('sessions').select('token_hash'), 'token_hash');
    add('api_keys', await db('api_keys').select('key_hash'), 'key_hash');
    add('password_resets', await db('password_resets').select('token_hash'), 'token_hash');
    add('users', await db('users').select('password_hash'), 'password_hash');
    // The flow really produced each kind of secret (so the checks below check something).
    for (const kind of ['auth_codes.code_hash', 'auth_codes.ticket_hash', 'sessions.token_hash', 'api_keys.key_hash', 'password_resets.token_hash', 'users.password_hash']) {
      expect(hashes.some((h) => h.name === kind), kind).to.equal(true);
    }
    expect(sessionTokens.size).to.be.at.least(3);
    expect(apiKey).to.match(/^rpk_/);
    const mails = mail.to(email);
    expect(mails).to.have.length(5); // verification code, sign-in code, 2FA off, key rotated, reset link

    const secrets: { name: string; value: string }[] = [
      ...Object.entries(passwords).map(([k, v]) => ({ name: `password ${k}`, value: v })),
      ...hashes,
    ];
    const leaks: string[] = [];
    const check = (where: string, text: string, list: { name: string; value: string }[]) => {
      for (const s of list) if (text.includes(s.value)) leaks.push(`${s.name} in ${where}`);
    };
    const tokens = [...sessionTokens].map((t, i) => ({ name: `session token ${i + 1}`, value: t }));
    const key = [{ name: 'API key', value: apiKey }];
    const resetAndTicket = [
      { name: 'reset token', value: resetToken },
      { name: '2FA ticket', value: ticket },
    ];

    for (const r of recorded) {
      check(`${r.label} body`, r.body, [...secrets, ...tokens, ...(r.label === rotateLabel ? [] : key), { name: 'reset token', value: resetToken }]);
      check(`${r.label} headers`, r.headers, [...secrets, ...tokens, ...key, ...resetAndTicket]);
      check(`${r.label} Set-Cookie`, r.setCookie, [...secrets, ...key, ...resetAndTicket]);
    }
    const rotation = recorded.filter((r) => r.body.includes(apiKey));
    expect(rotation.map((r) => r.label)).to.deep.equal([rotateLabel]);

    for (const [i, m] of mails.entries()) {
      check(`e-mail ${i + 1} (${m.subject})`, m.raw, [...secrets, ...tokens, ...key, { name: '2FA ticket', value: ticket }]);
      check(`e-mail ${i + 1} (${m.subject}) decoded`, m.text, [...secrets, ...tokens, ...key, { name: '2FA ticket', value: ticket }]);
    }

    // The capture really saw the app's log lines (one access line per request at least).
    expect(logs.text).to.include('/v1/auth/login');
    expect(logs.text).to.include('/v1/auth/password/reset');
    check('logs', logs.text, [...secrets, ...tokens, ...key, ...resetAndTicket]);

    expect(leaks, leaks.join('\n')).to.deep.equal([]);
  });

  it('logs of a failing request carry no secret either (error path)', async () => {
    // A request whose body carries a password and a token but fails validation or auth.
    const logs = await captureLogs(async () => {
      const a = await newAgent().post('/v1/auth/login').send({ email: 'x@example.com', password: 'Leaky9Password', extra: 'field' });
      expect(a.status).to.equal(400);
      const b = await newAgent().get('/v1/auth/me/api-key').set('Authorization', 'Bearer rpk_ThisIsNotARealKeyButSecretLooking1234567890');
      expect(b.status).to.equal(401);
      const c = await newAgent().get('/v1/auth/me').set('Cookie', 'escrow_session=SessionTokenThatMustNotBeLogged123');
      expect(c.status).to.equal(200);
    });
    expect(logs.lines).to.be.at.least(3);
    expect(logs.text).to.not.include('Leaky9Password');
    expect(logs.text).to.not.include('rpk_ThisIsNotARealKeyButSecretLooking1234567890');
    expect(logs.text).to.not.include('SessionTokenThatMustNotBeLogged123');
  });
});

/**
 * A seller's link-signing secret (decision D3, spec section 8): POST
 * /v1/partner/link-secret/rotate returns the `rls_` secret once, GET shows a masked
 * preview, the stored column is sealed, a rotation invalidates links signed with the old
 * secret, and rotation is limited to 5 per account per hour.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { createUser, signIn } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';

const ROTATE = '/v1/partner/link-secret/rotate';
const GET = '/v1/partner/link-secret';
const T0 = new Date('2026-12-20T08:00:00.000Z');
/** `rls_` + 32 random bytes in base64url. */
const SECRET_SHAPE = /^rls_[A-Za-z0-9_-]{43}$/;

type Client = ReturnType<typeof api>;

/** Independent D3 signer (node:crypto): present signed fields sorted, encodeURIComponent values, HMAC-SHA256 hex. */
function sign(secret: string, fields: Record<string, string>): string {
  const canonical = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${encodeURIComponent(fields[k]!)}`)
    .join('&');
  return createHmac('sha256', secret).update(canonical, 'utf8').digest('hex');
}

function linkOf(fields: Record<string, string>, sig: string): string {
  const query = Object.entries({ ...fields, sig })
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
  return `${config.publicBaseUrl}/pay?${query}`;
}

async function seller() {
  const { user } = await createUser();
  return { user, key: await issueKey(user.id) };
}

const rotate = (client: Client, key: string) => client.post(ROTATE).set('Authorization', `Bearer ${key}`).send({});
const read = (client: Client, key: string) => client.get(GET).set('Authorization', `Bearer ${key}`);

describe('partner link secret', () => {
  beforeEach(() => clock.set(T0));

  it('rotate returns an rls_ secret once, with Cache-Control: no-store', async () => {
    const client = api();
    const s = await seller();
    const res = await rotate(client, s.key);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.body.success).to.equal(true);
    expect(Object.keys(res.body.data).sort()).to.deep.equal(['created_at', 'link_secret']);
    expect(res.body.data.link_secret).to.match(SECRET_SHAPE);
    expect(res.body.data.created_at).to.equal(T0.toISOString());

    const again = await rotate(client, s.key);
    expect(again.status).to.equal(200);
    expect(again.body.data.link_secret).to.match(SECRET_SHAPE);
    expect(again.body.data.link_secret).to.not.equal(res.body.data.link_secret);
    expect(await countRows('link_secrets', { user_id: s.user.id })).to.equal(1);
  });

  it('GET shows a masked preview of the current secret, never the secret itself', async () => {
    const client = api();
    const s = await seller();
    const before = await read(client, s.key);
    expect(before.status).to.equal(200);
    expect(before.body.data).to.deep.equal({ link_secret: null, created_at: null });

    const secret = (await rotate(client, s.key)).body.data.link_secret as string;
    const res = await read(client, s.key);
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({ link_secret: `${secret.slice(0, 8)}…${secret.slice(-4)}`, created_at: T0.toISOString() });
    expect(JSON.stringify(res.body)).to.not.contain(secret);
    expect(JSON.stringify(res.body)).to.not.contain(secret.slice(8, -4));

    clock.advance(60_000);
    const second = (await rotate(client, s.key)).body.data.link_secret as string;
    const after = await read(client, s.key);
    expect(after.body.data).to.deep.equal({
      link_secret: `${second.slice(0, 8)}…${second.slice(-4)}`,
      created_at: new Date(T0.getTime() + 60_000).toISOString(),
    });
  });

  it('stores the secret sealed (AES-GCM), not in plaintext and not hashed', async () => {
    const client = api();
    const s = await seller();
    const secret = (await rotate(client, s.key)).body.data.link_secret as string;
    const row = (await db('link_secrets').where({ user_id: s.user.id }).first()) as { secret_sealed: string; preview: string };
    expect(row.secret_sealed).to.not.equal(secret);
    expect(row.secret_sealed).to.not.contain(secret.slice(4));
    expect(row.secret_sealed).to.match(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decryptSecret(row.secret_sealed)).to.equal(secret);
    expect(row.preview).to.equal(`${secret.slice(0, 8)}…${secret.slice(-4)}`);
    // No other column of the table holds the plaintext either.
    const raw = await db.raw<{ rows: { t: string }[] }>('SELECT row_to_json(l)::text AS t FROM link_secrets l WHERE user_id = ?', [s.user.id]);
    expect(raw.rows[0]!.t).to.not.contain(secret.slice(4));
  });

  it('a second rotation invalidates links signed with the old secret (SIG_MISMATCH); the new secret signs', async () => {
    const client = api();
    const s = await seller();
    const buyerKey = await issueKey((await createUser()).user.id);
    const oldSecret = (await rotate(client, s.key)).body.data.link_secret as string;
    const fields = { seller: s.user.id, item: 'Kamera bekas', ref: 'ord-rot-1', v: '1', expires: String(T0.getTime() / 1000 + 3600) };
    const oldLink = linkOf(fields, sign(oldSecret, fields));

    const newSecret = (await rotate(client, s.key)).body.data.link_secret as string;
    const refused = await client.post('/api/escrows/from-link').set('Authorization', `Bearer ${buyerKey}`).send({ link: oldLink, amount: 150_000 });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(422);
    expect(refused.body.error.code).to.equal('SIG_MISMATCH');
    expect(JSON.stringify(refused.body)).to.not.contain(oldSecret);
    expect(JSON.stringify(refused.body)).to.not.contain(newSecret);

    const fresh = await client
      .post('/api/escrows/from-link')
      .set('Authorization', `Bearer ${buyerKey}`)
      .send({ link: linkOf(fields, sign(newSecret, fields)), amount: 150_000 });
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(201);
    expect(fresh.body.data.partner_ref).to.equal('ord-rot-1');
  });

  it('a seller who never rotated has no secret: any link answers SIG_MISMATCH', async () => {
    const client = api();
    const s = await seller();
    const buyerKey = await issueKey((await createUser()).user.id);
    const fields = { seller: s.user.id, item: 'Kamera', ref: 'r1', v: '1', expires: String(T0.getTime() / 1000 + 60) };
    const res = await client
      .post('/api/escrows/from-link')
      .set('Authorization', `Bearer ${buyerKey}`)
      .send({ ...fields, sig: sign('rls_guess', fields), amount: 150_000 });
    expect(res.status).to.equal(422);
    expect(res.body.error.code).to.equal('SIG_MISMATCH');
  });

  it('each seller has their own secret: one seller rotating leaves the other untouched', async () => {
    const client = api();
    const a = await seller();
    const b = await seller();
    const aSecret = (await rotate(client, a.key)).body.data.link_secret as string;
    const bSecret = (await rotate(client, b.key)).body.data.link_secret as string;
    expect(aSecret).to.not.equal(bSecret);
    await rotate(client, b.key);
    const sealed = (await db('link_secrets').where({ user_id: a.user.id }).first()) as { secret_sealed: string };
    expect(decryptSecret(sealed.secret_sealed)).to.equal(aSecret);
  });

  it('unauthenticated callers get 401 UNAUTHORIZED on rotate and get; a wrong key 401 INVALID_TOKEN', async () => {
    const client = api();
    const r1 = await client.post(ROTATE).send({});
    expect(r1.status).to.equal(401);
    expect(r1.body.error.code).to.equal('UNAUTHORIZED');
    const r2 = await client.get(GET);
    expect(r2.status).to.equal(401);
    expect(r2.body.error.code).to.equal('UNAUTHORIZED');
    const r3 = await client.post(ROTATE).set('Authorization', 'Bearer rpk_notarealkeynotarealkeynotarealkeynotareal').send({});
    expect(r3.status).to.equal(401);
    expect(r3.body.error.code).to.equal('INVALID_TOKEN');
    expect(await countRows('link_secrets')).to.equal(0);
  });

  it('works with a session: the CSRF token is required for rotation', async () => {
    const agent = supertest.agent(createApp().callback());
    const { user } = await createUser();
    const csrf = await signIn(agent, user.email);
    const noCsrf = await agent.post(ROTATE).send({});
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_FAILED');
    const res = await agent.post(ROTATE).set('X-CSRF-Token', csrf).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.link_secret).to.match(SECRET_SHAPE);
    const got = await agent.get(GET);
    expect(got.body.data.link_secret).to.equal(`${(res.body.data.link_secret as string).slice(0, 8)}…${(res.body.data.link_secret as string).slice(-4)}`);
  });

  it('refuses a body with fields (400 INVALID_BODY) without rotating', async () => {
    const client = api();
    const s = await seller();
    const res = await client.post(ROTATE).set('Authorization', `Bearer ${s.key}`).send({ secret: 'rls_mine' });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('INVALID_BODY');
    expect(await countRows('link_secrets')).to.equal(0);
  });

  it('allows 5 rotations per account per hour; the 6th is 429 RATE_LIMITED with Retry-After and changes nothing', async () => {
    const client = api();
    const s = await seller();
    let last = '';
    for (let i = 1; i <= 5; i += 1) {
      const res = await rotate(client, s.key);
      expect(res.status, `rotation ${i}: ${JSON.stringify(res.body)}`).to.equal(200);
      last = res.body.data.link_secret as string;
    }
    const sixth = await rotate(client, s.key);
    expect(sixth.status).to.equal(429);
    expect(sixth.body.error.code).to.equal('RATE_LIMITED');
    const retryAfter = Number(sixth.headers['retry-after']);
    expect(retryAfter).to.be.within(3500, 3600);
    expect(sixth.body.data).to.equal(undefined);
    const sealed = (await db('link_secrets').where({ user_id: s.user.id }).first()) as { secret_sealed: string };
    expect(decryptSecret(sealed.secret_sealed)).to.equal(last);

    // Counted per account: another seller still rotates; reading is not limited.
    const other = await seller();
    expect((await rotate(client, other.key)).status).to.equal(200);
    expect((await read(client, s.key)).status).to.equal(200);
  });
});

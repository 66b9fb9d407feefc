/**
 * POST /api/escrows/from-link (consumer spec 2 and 4.2, decision D3): both body forms, the
 * Escrow answer, every refusal code with its HTTP status, signatures computed here
 * independently with node:crypto (plus literal vectors computed once with python3/openssl),
 * and idempotency. The clock is pinned, so expiry boundaries are exact to the second.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { encryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import * as users from '../../../shared/users/repo.js';
import type { UserRow } from '../../../shared/users/repo.js';

const FROM_LINK = '/api/escrows/from-link';
const T0 = new Date('2026-12-20T00:00:00.000Z');
const T0S = T0.getTime() / 1000;
const DAY = 24 * 3600;
const HOUR_MS = 3600_000;

type Client = ReturnType<typeof api>;
type Fields = Record<string, string>;

interface Party {
  user: UserRow;
  key: string;
}

interface Setup {
  client: Client;
  seller: Party;
  buyer: Party;
  secret: string;
}

// ---- Independent signer and link builders --------------------------------------------------

const SIGNED = ['buyer', 'category', 'desc', 'expires', 'item', 'ref', 'seller', 'v'];

/** D3 version 1, written here: present signed fields sorted by name, encodeURIComponent values, `&`, HMAC-SHA256 hex. */
function sign(secret: string, fields: Fields): string {
  const canonical = Object.keys(fields)
    .filter((k) => SIGNED.includes(k))
    .sort()
    .map((k) => `${k}=${encodeURIComponent(fields[k]!)}`)
    .join('&');
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(canonical, 'utf8')).digest('hex');
}

/** A built partner link. `percent` encodes with encodeURIComponent (space = %20); `form` uses URLSearchParams (space = +). */
function linkOf(params: Fields, style: 'percent' | 'form' = 'percent', base = `${config.publicBaseUrl}/pay`): string {
  const query =
    style === 'form'
      ? new URLSearchParams(params).toString()
      : Object.entries(params)
          .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
          .join('&');
  return `${base}?${query}`;
}

let refSeq = 0;

/** A valid field set for the seller; `undefined` in `over` removes a field. */
function fieldsFor(sellerId: string, over: Record<string, string | undefined> = {}): Fields {
  refSeq += 1;
  const merged: Record<string, string | undefined> = {
    seller: sellerId,
    item: 'Kamera Fujifilm X100V',
    category: 'goods',
    desc: 'Mulus, lengkap dengan dus',
    ref: `ord-${refSeq}`,
    v: '1',
    expires: String(T0S + 3600),
    ...over,
  };
  const out: Fields = {};
  for (const [k, v] of Object.entries(merged)) if (v !== undefined) out[k] = v;
  return out;
}

/** Signed fields plus their `sig`. */
function signed(secret: string, fields: Fields): Fields {
  return { ...fields, sig: sign(secret, fields) };
}

// ---- Parties -----------------------------------------------------------------------------

async function party(): Promise<Party> {
  const { user } = await createUser();
  return { user, key: await issueKey(user.id) };
}

async function rotate(client: Client, key: string): Promise<string> {
  const res = await client.post('/v1/partner/link-secret/rotate').set('Authorization', `Bearer ${key}`).send({});
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.data.link_secret as string;
}

async function setup(): Promise<Setup> {
  const client = api();
  const seller = await party();
  const buyer = await party();
  return { client, seller, buyer, secret: await rotate(client, seller.key) };
}

/** A user with a chosen id (for the literal vectors, whose seller and buyer ids are fixed). */
async function userWithId(id: string): Promise<UserRow> {
  const now = clock.now();
  const tag = id.slice(0, 8);
  return users.insert(db, {
    id,
    email: `fixed-${tag}@example.com`,
    username: `fixed_${tag}`,
    full_name: `Fixed ${tag}`,
    role: 'user',
    status: 'active',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  });
}

function post(s: Pick<Setup, 'client'>, key: string, body: object, idempotencyKey?: string) {
  const req = s.client.post(FROM_LINK).set('Authorization', `Bearer ${key}`);
  if (idempotencyKey) void req.set('Idempotency-Key', idempotencyKey);
  return req.send(body);
}

const asBuyer = (s: Setup, body: object, idempotencyKey?: string) => post(s, s.buyer.key, body, idempotencyKey);

function expectCreated(res: Response): Record<string, unknown> {
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  expect(res.body.success).to.equal(true);
  return res.body.data as Record<string, unknown>;
}

/** The exact refusal, and no escrow written by it (`rows` escrows exist in all). */
async function expectRefused(res: Response, status: number, code: string, rows = 0): Promise<void> {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code, JSON.stringify(res.body)).to.equal(code);
  expect(res.body.error.message).to.be.a('string').and.not.equal('');
  expect(await countRows('escrows')).to.equal(rows);
}

// ---- Tests -------------------------------------------------------------------------------

describe('POST /api/escrows/from-link', () => {
  beforeEach(() => clock.set(T0));

  describe('the 201 answer', () => {
    it('link form: the Escrow of spec section 2, buyer = caller, seller from the link', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { ref: 'INV-2026-0001' });
      const data = expectCreated(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }));
      expect(data.id).to.be.a('string').and.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const id = data.id as string;
      expect({
        id: data.id,
        buyer_id: data.buyer_id,
        seller_id: data.seller_id,
        item_name: data.item_name,
        amount: data.amount,
        description: data.description,
        category: data.category,
        status: data.status,
        partner_ref: data.partner_ref,
        partner_sig_version: data.partner_sig_version,
        created_at: data.created_at,
        updated_at: data.updated_at,
        escrow_url: data.escrow_url,
        expires_at: data.expires_at,
      }).to.deep.equal({
        id,
        buyer_id: s.buyer.user.id,
        seller_id: s.seller.user.id,
        item_name: 'Kamera Fujifilm X100V',
        amount: '150000',
        description: 'Mulus, lengkap dengan dus',
        category: 'goods',
        status: 'pending_payment',
        partner_ref: 'INV-2026-0001',
        partner_sig_version: 1,
        created_at: T0.toISOString(),
        updated_at: T0.toISOString(),
        escrow_url: `${config.publicBaseUrl}/pay/${id}`,
        expires_at: new Date(T0.getTime() + 24 * HOUR_MS).toISOString(),
      });
      // No courier yet, so no tracking object.
      expect(data).to.not.have.property('tracking');

      const row = (await db('escrows').where({ id }).first()) as Record<string, unknown>;
      expect(row).to.include({ source: 'link', created_by: s.buyer.user.id, partner_ref: 'INV-2026-0001', partner_sig_version: 1, status: 'pending_payment' });
      expect(Number(row.amount)).to.equal(150_000);
      const events = (await db('escrow_events').where({ escrow_id: id }).select('event', 'actor_role', 'actor_id')) as unknown[];
      expect(events).to.deep.equal([{ event: 'escrow.created', actor_role: 'buyer', actor_id: s.buyer.user.id }]);
    });

    it('flattened form: the same answer; amount as a string is echoed; expires and v may be JSON numbers', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { category: 'service', item: 'Jasa desain logo', desc: 'Tiga revisi' });
      const body = { ...signed(s.secret, fields), expires: Number(fields.expires), v: 1, amount: '250000' };
      const data = expectCreated(await asBuyer(s, body));
      expect(data).to.include({
        buyer_id: s.buyer.user.id,
        seller_id: s.seller.user.id,
        item_name: 'Jasa desain logo',
        amount: '250000',
        description: 'Tiga revisi',
        category: 'service',
        status: 'pending_payment',
        partner_ref: fields.ref,
        partner_sig_version: 1,
        created_at: T0.toISOString(),
        updated_at: T0.toISOString(),
        escrow_url: `${config.publicBaseUrl}/pay/${data.id as string}`,
        expires_at: new Date(T0.getTime() + 24 * HOUR_MS).toISOString(),
      });
    });

    it('without the optional desc and category: description is empty and category goods', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { desc: undefined, category: undefined });
      const data = expectCreated(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 10_000 }));
      expect(data).to.include({ description: '', category: 'goods', amount: '10000' });
    });

    it('category digital with an empty desc signed as present', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { category: 'digital', desc: '' });
      const data = expectCreated(await asBuyer(s, signedBody(s, fields, 99_000)));
      expect(data).to.include({ description: '', category: 'digital' });
    });

    const AWKWARD = {
      item: 'Kopi Gayo ☕ 250g & filter=V60+',
      desc: "Roasted 2x (medium) — it's fresh! 100% arabika; a+b=c ?#/",
    };

    it('link form, percent-encoded: values with spaces, &, =, +, %, # and unicode verify and are stored decoded', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, AWKWARD);
      const data = expectCreated(await asBuyer(s, { link: linkOf(signed(s.secret, fields), 'percent'), amount: 150_000 }));
      expect(data).to.include({ item_name: AWKWARD.item, description: AWKWARD.desc });
    });

    it('link form, form-encoded (URLSearchParams, space as +): the same values verify', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, AWKWARD);
      const link = linkOf(signed(s.secret, fields), 'form');
      expect(link).to.contain('Kopi+Gayo'); // really the + spelling of a space
      const data = expectCreated(await asBuyer(s, { link, amount: 150_000 }));
      expect(data).to.include({ item_name: AWKWARD.item, description: AWKWARD.desc });
    });

    it('flattened form: the same values verify', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, AWKWARD);
      const data = expectCreated(await asBuyer(s, signedBody(s, fields, 150_000)));
      expect(data).to.include({ item_name: AWKWARD.item, description: AWKWARD.desc });
    });

    it('link form: query order does not matter and unsigned extra parameters are ignored', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      const all = signed(s.secret, fields);
      const reordered: Fields = { utm_source: 'partner', sig: all.sig!, v: '1', ref: all.ref!, seller: all.seller!, expires: all.expires!, item: all.item!, desc: all.desc!, category: all.category! };
      expectCreated(await asBuyer(s, { link: linkOf(reordered), amount: 150_000 }));
    });

    it('accepts the uppercase spelling of the hex signature', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      expectCreated(await asBuyer(s, { ...fields, sig: sign(s.secret, fields).toUpperCase(), amount: 150_000 }));
    });

    it('literal vector A (every field but buyer; computed with python3 and openssl) creates the escrow', async () => {
      const client = api();
      const secret = 'rls_fixedVectorSecret_0123456789abcdefABCDEF-_xyz';
      const seller = await userWithId('5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e');
      await db('link_secrets').insert({ user_id: seller.id, secret_sealed: encryptSecret(secret), preview: 'rls_fixe…_xyz', created_at: clock.now() });
      const buyer = await party();
      const link =
        `${config.publicBaseUrl}/pay?seller=5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e` +
        '&item=Kopi%20Gayo%20%E2%98%95%20250g%20%26%20filter%3DV60%2B' +
        "&desc=Roasted%202x%20(medium)%20%E2%80%94%20it's%20fresh!*~" +
        '&category=goods&expires=1798761600&ref=INV%2F2026%20%2342&v=1' +
        '&sig=3e19bef6b6ec3f2ab737c328dd2666ee6aad207feda9317af97531a16dbd2177';
      const data = expectCreated(await post({ client }, buyer.key, { link, amount: 150_000 }));
      expect(data).to.include({
        seller_id: seller.id,
        buyer_id: buyer.user.id,
        item_name: 'Kopi Gayo ☕ 250g & filter=V60+',
        description: "Roasted 2x (medium) — it's fresh!*~",
        partner_ref: 'INV/2026 #42',
      });
    });

    it('literal vector B (buyer signed, no desc or category) creates the escrow for that buyer', async () => {
      const client = api();
      const secret = 'rls_fixedVectorSecret_0123456789abcdefABCDEF-_xyz';
      const seller = await userWithId('5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e');
      await db('link_secrets').insert({ user_id: seller.id, secret_sealed: encryptSecret(secret), preview: 'rls_fixe…_xyz', created_at: clock.now() });
      const buyer = await userWithId('0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a');
      const data = expectCreated(
        await post({ client }, await issueKey(buyer.id), {
          seller: '5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e',
          item: 'Sepatu+lari 42',
          expires: '1798761600',
          ref: 'ord-7',
          v: '1',
          buyer: '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a',
          sig: 'f9d4a1c1d2cb45ef75d658151ea652c9c0e2966ef9d2099dc37a058a50c6c115',
          amount: 150_000,
        }),
      );
      expect(data).to.include({ buyer_id: buyer.id, item_name: 'Sepatu+lari 42', description: '', category: 'goods' });
    });

    it('the amount is not signed: any amount in range is accepted with the same signature', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      const sig = sign(s.secret, fields);
      // The buyer chooses the amount; the partner's signature does not cover it.
      const data = expectCreated(await asBuyer(s, { link: linkOf({ ...fields, sig }), amount: 12_345 }));
      expect(data.amount).to.equal('12345');
    });
  });

  describe('refusals', () => {
    it('400 INVALID_BODY for a body without any partner parameter, or with both link and flattened fields', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, { amount: 150_000 }), 400, 'INVALID_BODY');
      const fields = fieldsFor(s.seller.user.id);
      await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), ...signed(s.secret, fields), amount: 150_000 }), 400, 'INVALID_BODY');
    });

    it('400 INVALID_URL for a link that is not an absolute http(s) URL', async () => {
      const s = await setup();
      const query = new URLSearchParams(signed(s.secret, fieldsFor(s.seller.user.id))).toString();
      for (const link of ['not a url', `/pay?${query}`, `ftp://localhost:3000/pay?${query}`, `javascript:alert(1)//?${query}`]) {
        await expectRefused(await asBuyer(s, { link, amount: 150_000 }), 400, 'INVALID_URL');
      }
    });

    it('400 INVALID_URL for a link carrying a partner parameter twice', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      const link = `${linkOf(signed(s.secret, fields))}&item=${encodeURIComponent('Barang lain')}`;
      await expectRefused(await asBuyer(s, { link, amount: 150_000 }), 400, 'INVALID_URL');
    });

    it('422 HOST_NOT_ALLOWED for a correctly signed link on another host', async () => {
      const s = await setup();
      const params = signed(s.secret, fieldsFor(s.seller.user.id));
      for (const base of [
        'https://evil.example/pay',
        'http://localhost:3001/pay',
        'http://localhost.evil.example:3000/pay',
        'http://localhost:3000@evil.example/pay',
        'http://127.0.0.1:3000/pay',
      ]) {
        await expectRefused(await asBuyer(s, { link: linkOf(params, 'percent', base), amount: 150_000 }), 422, 'HOST_NOT_ALLOWED');
      }
    });

    it('400 SIGNATURE_REQUIRED for partner parameters without sig (both forms) or with an empty sig', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      await expectRefused(await asBuyer(s, { ...fields, amount: 150_000 }), 400, 'SIGNATURE_REQUIRED');
      await expectRefused(await asBuyer(s, { link: linkOf(fields), amount: 150_000 }), 400, 'SIGNATURE_REQUIRED');
      await expectRefused(await asBuyer(s, { ...fields, sig: '', amount: 150_000 }), 400, 'SIGNATURE_REQUIRED');
    });

    it('422 UNSUPPORTED_SIG_VERSION for v=2, even when correctly signed', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { v: '2' });
      await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'UNSUPPORTED_SIG_VERSION');
    });

    for (const missing of ['ref', 'expires', 'v'] as const) {
      it(`422 SIG_INCOMPLETE when ${missing} is missing (signed without it)`, async () => {
        const s = await setup();
        const fields = fieldsFor(s.seller.user.id, { [missing]: undefined });
        await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'SIG_INCOMPLETE');
      });
    }

    it('422 INVALID_EXPIRES for expires that is not a unix timestamp in seconds', async () => {
      const s = await setup();
      for (const expires of ['besok', '2026-12-21T00:00:00Z', String((T0S + 3600) * 1000), '1798761600.5']) {
        const fields = fieldsFor(s.seller.user.id, { expires });
        await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 422, 'INVALID_EXPIRES');
      }
    });

    it('422 LINK_EXPIRED at the expiry second, and for a link that expired while the buyer waited', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { expires: String(T0S) }), 150_000)), 422, 'LINK_EXPIRED');

      const fields = fieldsFor(s.seller.user.id, { expires: String(T0S + 600) });
      const body = signedBody(s, fields, 150_000);
      clock.advance(600_000);
      await expectRefused(await asBuyer(s, body), 422, 'LINK_EXPIRED');
      clock.set(new Date(T0.getTime() + 599_000));
      expectCreated(await asBuyer(s, body));
    });

    it('422 EXPIRES_TOO_FAR for 30 days and 1 second ahead', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { expires: String(T0S + 30 * DAY + 1) });
      await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'EXPIRES_TOO_FAR');
    });

    it('exactly 30 days ahead is accepted', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { expires: String(T0S + 30 * DAY) });
      expectCreated(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }));
    });

    it('422 SIG_MISMATCH for an item changed after signing (link and flattened forms)', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      const sig = sign(s.secret, fields);
      await expectRefused(await asBuyer(s, { link: linkOf({ ...fields, item: 'Kamera Leica M6', sig }), amount: 150_000 }), 422, 'SIG_MISMATCH');
      await expectRefused(await asBuyer(s, { ...fields, item: `${fields.item!} `, sig, amount: 150_000 }), 422, 'SIG_MISMATCH');
    });

    it('422 SIG_MISMATCH for a signature made with another secret (a guessed one, another seller\'s)', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      await expectRefused(await asBuyer(s, { ...fields, sig: sign('rls_not-the-secret', fields), amount: 150_000 }), 422, 'SIG_MISMATCH');
      const other = await party();
      const otherSecret = await rotate(s.client, other.key);
      await expectRefused(await asBuyer(s, { ...fields, sig: sign(otherSecret, fields), amount: 150_000 }), 422, 'SIG_MISMATCH');
    });

    it('422 SIG_MISMATCH for a signed field added or removed after signing, or a seller swapped', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { desc: undefined });
      const sig = sign(s.secret, fields);
      await expectRefused(await asBuyer(s, { ...fields, desc: 'tambahan', sig, amount: 150_000 }), 422, 'SIG_MISMATCH');
      await expectRefused(await asBuyer(s, { ...fields, buyer: s.buyer.user.id, sig, amount: 150_000 }), 422, 'SIG_MISMATCH');
      const { category: _dropped, ...withoutCategory } = fields;
      await expectRefused(await asBuyer(s, { ...withoutCategory, sig, amount: 150_000 }), 422, 'SIG_MISMATCH');
      // The seller's own secret over another seller's id: the link names that other seller.
      const other = await party();
      await rotate(s.client, other.key);
      const forged = { ...fields, seller: other.user.id };
      await expectRefused(await asBuyer(s, { ...forged, sig: sign(s.secret, forged), amount: 150_000 }), 422, 'SIG_MISMATCH');
    });

    it('422 SIG_MISMATCH for a malformed signature', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      const good = sign(s.secret, fields);
      for (const sig of ['zz', good.slice(0, 63), `${good}00`, Buffer.from(good, 'hex').toString('base64')]) {
        await expectRefused(await asBuyer(s, { ...fields, sig, amount: 150_000 }), 422, 'SIG_MISMATCH');
      }
    });

    it('422 SIG_MISMATCH when a raw + in the link was meant as a plus (query strings read + as a space)', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { item: 'Sepatu+lari' });
      const link = linkOf(signed(s.secret, fields)).replace('Sepatu%2Blari', 'Sepatu+lari');
      expect(link).to.contain('item=Sepatu+lari&');
      await expectRefused(await asBuyer(s, { link, amount: 150_000 }), 422, 'SIG_MISMATCH');
    });

    it('422 SIG_MISMATCH (not a 500) for a flattened value that is not well-formed UTF-16', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      const sig = sign(s.secret, fields);
      await expectRefused(await asBuyer(s, { ...fields, item: 'Kamera \ud800', sig, amount: 150_000 }), 422, 'SIG_MISMATCH');
    });

    it('422 INVALID_SELLER for a seller that is not a UUID v4', async () => {
      const s = await setup();
      for (const seller of ['seller-42', '5b0e9f3c-2a71-1d8e-9c4b-7f1a2b3c4d5e', `${s.seller.user.id}0`]) {
        const fields = fieldsFor(s.seller.user.id, { seller });
        await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 422, 'INVALID_SELLER');
      }
      await expectRefused(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { seller: undefined }), 150_000)), 422, 'INVALID_SELLER');
    });

    it('422 SELLER_IS_BUYER when the seller opens their own link', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id);
      await expectRefused(await post(s, s.seller.key, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'SELLER_IS_BUYER');
    });

    it('422 SELLER_NOT_FOUND for an unknown seller id (UUID v4)', async () => {
      const s = await setup();
      const fields = fieldsFor(randomUUID());
      await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 422, 'SELLER_NOT_FOUND');
    });

    it('422 SELLER_NOT_FOUND for a suspended seller, even with a correct signature', async () => {
      const s = await setup();
      await db('users').where({ id: s.seller.user.id }).update({ status: 'suspended' });
      const fields = fieldsFor(s.seller.user.id);
      await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 422, 'SELLER_NOT_FOUND');
    });

    it('422 INVALID_CATEGORY for a signed category outside goods, service, digital', async () => {
      const s = await setup();
      for (const category of ['food', 'Goods', '']) {
        const fields = fieldsFor(s.seller.user.id, { category });
        await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 422, 'INVALID_CATEGORY');
      }
    });

    it('422 INVALID_ITEM for an empty, blank or missing item', async () => {
      const s = await setup();
      for (const item of ['', '   ', undefined]) {
        const fields = fieldsFor(s.seller.user.id, { item });
        await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 422, 'INVALID_ITEM');
      }
    });

    it('422 INVALID_ITEM for an item over 200 characters; exactly 200 is accepted', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { item: 'x'.repeat(201) }), 150_000)), 422, 'INVALID_ITEM');
      const data = expectCreated(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { item: 'x'.repeat(200) }), 150_000)));
      expect(data.item_name).to.equal('x'.repeat(200));
    });

    it('422 INVALID_ITEM for control characters in the item (link form, where the body check cannot see them)', async () => {
      const s = await setup();
      for (const item of ['Kamera\u0000', 'Kamera\nbaru', 'Kamera\u007f']) {
        const fields = fieldsFor(s.seller.user.id, { item });
        await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'INVALID_ITEM');
      }
    });

    it('422 INVALID_ITEM for a desc over 2000 characters', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { desc: 'd'.repeat(2001) });
      await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 422, 'INVALID_ITEM');
    });

    it('422 INVALID_ITEM (not a 500) for a NUL character in the desc of a link', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { desc: 'baru\u0000' });
      await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'INVALID_ITEM');
    });

    it('422 SIG_INCOMPLETE (not a 500) for a NUL character in the ref of a link', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { ref: 'ord\u00001' });
      await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'SIG_INCOMPLETE');
    });

    it('a ref of 128 characters is accepted; 129 answers 422 SIG_INCOMPLETE', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { ref: 'r'.repeat(129) }), 150_000)), 422, 'SIG_INCOMPLETE');
      const data = expectCreated(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { ref: 'r'.repeat(128) }), 150_000)));
      expect(data.partner_ref).to.equal('r'.repeat(128));
    });

    it('422 BUYER_MISMATCH when the link names another buyer', async () => {
      const s = await setup();
      const other = await party();
      const fields = fieldsFor(s.seller.user.id, { buyer: other.user.id });
      await expectRefused(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }), 422, 'BUYER_MISMATCH');
    });

    it('a link naming the caller as buyer is accepted', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { buyer: s.buyer.user.id });
      const data = expectCreated(await asBuyer(s, { link: linkOf(signed(s.secret, fields)), amount: 150_000 }));
      expect(data.buyer_id).to.equal(s.buyer.user.id);
    });

    it('400 INVALID_AMOUNT below 10,000, above 500,000,000, or not whole', async () => {
      const s = await setup();
      for (const amount of [9_999, 500_000_001, 10_000.5, '10000.5', '9999', '500000001', 0, -150_000, 'seratus ribu']) {
        const fields = fieldsFor(s.seller.user.id);
        await expectRefused(await asBuyer(s, signedBody(s, fields, amount)), 400, 'INVALID_AMOUNT');
      }
    });

    it('400 INVALID_AMOUNT for an amount string that is not plain digits (exponent, decimal point, spaces)', async () => {
      const s = await setup();
      for (const amount of ['1e5', '150000.0', ' 150000', '0x249F0']) {
        const fields = fieldsFor(s.seller.user.id);
        await expectRefused(await asBuyer(s, signedBody(s, fields, amount)), 400, 'INVALID_AMOUNT');
      }
    });

    it('the amount boundaries 10,000 and 500,000,000 are accepted', async () => {
      const s = await setup();
      const low = expectCreated(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id), 10_000)));
      const high = expectCreated(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id), 500_000_000)));
      expect([low.amount, high.amount]).to.deep.equal(['10000', '500000000']);
    });

    it('409 DUPLICATE_REF for a second escrow with the same seller and ref', async () => {
      const s = await setup();
      const fields = fieldsFor(s.seller.user.id, { ref: 'ord-dup' });
      expectCreated(await asBuyer(s, signedBody(s, fields, 150_000)));
      const another = await party();
      await expectRefused(await post(s, another.key, signedBody(s, fields, 175_000)), 409, 'DUPLICATE_REF', 1);
      await expectRefused(await asBuyer(s, signedBody(s, fields, 150_000)), 409, 'DUPLICATE_REF', 1);
    });

    it('the same ref with a different seller is a different escrow', async () => {
      const s = await setup();
      const other = await party();
      const otherSecret = await rotate(s.client, other.key);
      expectCreated(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { ref: 'ord-shared' }), 150_000)));
      const data = expectCreated(await asBuyer(s, { ...signed(otherSecret, fieldsFor(other.user.id, { ref: 'ord-shared' })), amount: 150_000 }));
      expect(data).to.include({ seller_id: other.user.id, partner_ref: 'ord-shared' });
      expect(await countRows('escrows', { partner_ref: 'ord-shared' })).to.equal(2);
    });

    it('401 UNAUTHORIZED without credentials', async () => {
      const s = await setup();
      const res = await s.client.post(FROM_LINK).send(signedBody(s, fieldsFor(s.seller.user.id), 150_000));
      await expectRefused(res, 401, 'UNAUTHORIZED');
    });
  });

  describe('the order of checks', () => {
    it('a malformed seller is reported before a bad amount', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id, { seller: 'x' }), 5)), 422, 'INVALID_SELLER');
    });

    it('a bad amount is reported before an unknown seller or a wrong signature', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, signedBody(s, fieldsFor(randomUUID()), 5)), 400, 'INVALID_AMOUNT');
      const fields = fieldsFor(s.seller.user.id);
      await expectRefused(await asBuyer(s, { ...fields, sig: 'f'.repeat(64), amount: 5 }), 400, 'INVALID_AMOUNT');
    });

    it('an unsigned link cannot probe content: a wrong signature is reported before buyer, category and item checks', async () => {
      const s = await setup();
      const other = await party();
      const fields = fieldsFor(s.seller.user.id, { buyer: other.user.id, category: 'food', item: '' });
      await expectRefused(await asBuyer(s, { ...fields, sig: 'f'.repeat(64), amount: 150_000 }), 422, 'SIG_MISMATCH');
      await expectRefused(await post(s, s.seller.key, { ...fields, sig: 'f'.repeat(64), amount: 150_000 }), 422, 'SIG_MISMATCH');
    });

    it('the host is checked before the signature is required', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, { link: linkOf(fieldsFor(s.seller.user.id), 'percent', 'https://evil.example/pay'), amount: 150_000 }), 422, 'HOST_NOT_ALLOWED');
    });
  });

  describe('idempotency', () => {
    it('the same key and body replays the answer (Idempotent-Replay: true, same id, one row)', async () => {
      const s = await setup();
      const key = randomUUID();
      const body = { link: linkOf(signed(s.secret, fieldsFor(s.seller.user.id))), amount: 150_000 };
      const first = await asBuyer(s, body, key);
      const data = expectCreated(first);
      expect(first.headers['idempotent-replay']).to.equal(undefined);
      clock.advance(60_000);
      const again = await asBuyer(s, body, key);
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(again.body.data.id).to.equal(data.id);
      expect(await countRows('escrows')).to.equal(1);
      expect(await countRows('escrow_events')).to.equal(1);
    });

    it('the same key with a different body answers 422 IDEMPOTENCY_KEY_CONFLICT', async () => {
      const s = await setup();
      const key = randomUUID();
      const body = signedBody(s, fieldsFor(s.seller.user.id), 150_000);
      expectCreated(await asBuyer(s, body, key));
      await expectRefused(await asBuyer(s, { ...body, amount: 160_000 }, key), 422, 'IDEMPOTENCY_KEY_CONFLICT', 1);
    });

    it('a fresh key with the same ref answers 409 DUPLICATE_REF', async () => {
      const s = await setup();
      const body = signedBody(s, fieldsFor(s.seller.user.id), 150_000);
      expectCreated(await asBuyer(s, body, randomUUID()));
      await expectRefused(await asBuyer(s, body, randomUUID()), 409, 'DUPLICATE_REF', 1);
    });

    it('a refusal is not cached: the same key then succeeds with the corrected body', async () => {
      const s = await setup();
      const key = randomUUID();
      const fields = fieldsFor(s.seller.user.id);
      await expectRefused(await asBuyer(s, signedBody(s, fields, 5), key), 400, 'INVALID_AMOUNT');
      const ok = await asBuyer(s, signedBody(s, fields, 150_000), key);
      expectCreated(ok);
      expect(ok.headers['idempotent-replay']).to.equal(undefined);
    });

    it('a key that is not a UUID v4 answers 400 IDEMPOTENCY_KEY_INVALID', async () => {
      const s = await setup();
      await expectRefused(await asBuyer(s, signedBody(s, fieldsFor(s.seller.user.id), 150_000), 'not-a-uuid'), 400, 'IDEMPOTENCY_KEY_INVALID');
    });
  });
});

/** The flattened body of a signed field set. */
function signedBody(s: Pick<Setup, 'secret'>, fields: Fields, amount: unknown): Record<string, unknown> {
  return { ...signed(s.secret, fields), amount };
}

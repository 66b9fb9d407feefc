/**
 * Signed partner links, version 1 (decision D3), without HTTP: the canonical string, the
 * HMAC, the constant-time check, and the shape checks with their codes and order.
 * Expected values come from an independent signer written here with node:crypto, and from
 * literal vectors computed once outside Node (python3 hmac + urllib.parse.quote with
 * safe="!*'()", cross-checked with `openssl dgst -sha256 -hmac`).
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { AppError } from '../../../shared/errors.js';
import {
  MAX_LINK_LIFETIME_SECONDS,
  SIGNED_FIELDS,
  canonicalString,
  checkLinkShape,
  signLink,
  signatureMatches,
  type LinkParams,
  type SignedField,
} from '../../../shared/escrows/links.js';

// ---- Literal vectors ---------------------------------------------------------------------

const FIXED_SECRET = 'rls_fixedVectorSecret_0123456789abcdefABCDEF-_xyz';

/** Every signed field but buyer; values that need encoding (space, &, =, +, /, #, U+2615, U+2014). */
const VECTOR_A: LinkParams = {
  seller: '5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e',
  item: 'Kopi Gayo ☕ 250g & filter=V60+',
  desc: "Roasted 2x (medium) — it's fresh!*~",
  category: 'goods',
  expires: '1798761600',
  ref: 'INV/2026 #42',
  v: '1',
};
const VECTOR_A_CANONICAL =
  "category=goods&desc=Roasted%202x%20(medium)%20%E2%80%94%20it's%20fresh!*~&expires=1798761600" +
  '&item=Kopi%20Gayo%20%E2%98%95%20250g%20%26%20filter%3DV60%2B&ref=INV%2F2026%20%2342' +
  '&seller=5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e&v=1';
const VECTOR_A_SIG = '3e19bef6b6ec3f2ab737c328dd2666ee6aad207feda9317af97531a16dbd2177';

/** With buyer, without desc and category. */
const VECTOR_B: LinkParams = {
  seller: '5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e',
  item: 'Sepatu+lari 42',
  expires: '1798761600',
  ref: 'ord-7',
  v: '1',
  buyer: '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a',
};
const VECTOR_B_CANONICAL =
  'buyer=0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a&expires=1798761600&item=Sepatu%2Blari%2042&ref=ord-7' +
  '&seller=5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e&v=1';
const VECTOR_B_SIG = 'f9d4a1c1d2cb45ef75d658151ea652c9c0e2966ef9d2099dc37a058a50c6c115';

// ---- The independent signer --------------------------------------------------------------

const SIGNED = ['buyer', 'category', 'desc', 'expires', 'item', 'ref', 'seller', 'v'];

function referenceCanonical(params: Record<string, string | undefined>): string {
  return Object.keys(params)
    .filter((k) => SIGNED.includes(k) && params[k] !== undefined)
    .sort()
    .map((k) => `${k}=${encodeURIComponent(params[k]!)}`)
    .join('&');
}

function referenceSign(secret: string, params: Record<string, string | undefined>): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(referenceCanonical(params), 'utf8')).digest('hex');
}

// ---- Arbitraries -------------------------------------------------------------------------

/** Values a partner may sign: awkward ASCII, reserved URL characters, and full Unicode graphemes. */
const awkward = fc
  .array(fc.constantFrom('a', 'Z', '0', ' ', '&', '=', '+', '%', '#', '?', '/', ';', ',', '~', '*', "'", '(', ')', '!', '☕', 'é', '—', '😀', '%20'), {
    maxLength: 12,
  })
  .map((parts) => parts.join(''));
const value = fc.oneof(awkward, fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 12 }));

const paramsArb: fc.Arbitrary<LinkParams> = fc.record(
  { buyer: value, category: value, desc: value, expires: value, item: value, ref: value, seller: value, v: value },
  { requiredKeys: [] },
);
const secretArb = fc.string({ minLength: 1, maxLength: 60 });
const fieldArb = fc.constantFrom<SignedField>(...SIGNED_FIELDS);

function shapeError(params: LinkParams, now: Date): { status: number; code: string } | null {
  try {
    checkLinkShape(params, now);
    return null;
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    const e = err as AppError;
    return { status: e.status, code: e.code };
  }
}

// ---- Tests -------------------------------------------------------------------------------

describe('signed partner links (shared/escrows/links.ts)', () => {
  describe('canonical string and signature', () => {
    it('matches the literal vector with every field but buyer (encoded spaces, &, =, +, /, #, unicode)', () => {
      expect(canonicalString(VECTOR_A)).to.equal(VECTOR_A_CANONICAL);
      expect(signLink(FIXED_SECRET, VECTOR_A)).to.equal(VECTOR_A_SIG);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A, sig: VECTOR_A_SIG })).to.equal(true);
    });

    it('matches the literal vector with buyer and without desc or category', () => {
      expect(canonicalString(VECTOR_B)).to.equal(VECTOR_B_CANONICAL);
      expect(signLink(FIXED_SECRET, VECTOR_B)).to.equal(VECTOR_B_SIG);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_B, sig: VECTOR_B_SIG })).to.equal(true);
    });

    it('leaves sig out of the canonical string, keeps empty values, and drops absent fields', () => {
      expect(canonicalString({ ...VECTOR_B, sig: VECTOR_B_SIG })).to.equal(VECTOR_B_CANONICAL);
      expect(canonicalString({ v: '1', item: '', ref: 'r' })).to.equal('item=&ref=r&v=1');
      expect(canonicalString({ v: '1', desc: undefined })).to.equal('v=1');
      expect(canonicalString({})).to.equal('');
    });

    it('signs lowercase hex of 64 characters', () => {
      expect(signLink(FIXED_SECRET, VECTOR_A)).to.match(/^[0-9a-f]{64}$/);
    });

    it('accepts the uppercase spelling of the hex signature and refuses malformed ones', () => {
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A, sig: VECTOR_A_SIG.toUpperCase() })).to.equal(true);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A, sig: VECTOR_A_SIG.slice(0, 63) })).to.equal(false);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A, sig: `${VECTOR_A_SIG}0` })).to.equal(false);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A, sig: ` ${VECTOR_A_SIG.slice(1)}` })).to.equal(false);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A, sig: Buffer.from(VECTOR_A_SIG, 'hex').toString('base64') })).to.equal(false);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A })).to.equal(false);
      expect(signatureMatches(FIXED_SECRET, { ...VECTOR_A, sig: '' })).to.equal(false);
    });

    it('property: the canonical string and the HMAC equal the independent signer for any fields', () => {
      fc.assert(
        fc.property(secretArb, paramsArb, (secret, params) => {
          expect(canonicalString(params)).to.equal(referenceCanonical(params));
          expect(signLink(secret, params)).to.equal(referenceSign(secret, params));
        }),
        { numRuns: 300 },
      );
    });

    it('property: a signed link verifies; changing, adding or removing any one signed field breaks it', () => {
      fc.assert(
        fc.property(secretArb, paramsArb, fieldArb, value, (secret, params, field, replacement) => {
          const sig = signLink(secret, params);
          expect(signatureMatches(secret, { ...params, sig })).to.equal(true);

          const changed: LinkParams = { ...params, sig };
          if (params[field] === undefined) {
            changed[field] = replacement; // a field added after signing
          } else if (params[field] === replacement) {
            delete changed[field]; // a field removed after signing
          } else {
            changed[field] = replacement; // a field altered after signing
          }
          expect(signatureMatches(secret, changed)).to.equal(false);
        }),
        { numRuns: 500 },
      );
    });

    it('property: another secret does not verify the link', () => {
      fc.assert(
        fc.property(secretArb, secretArb, paramsArb, (secret, other, params) => {
          fc.pre(secret !== other);
          expect(signatureMatches(other, { ...params, sig: signLink(secret, params) })).to.equal(false);
        }),
        { numRuns: 200 },
      );
    });

    it('property: moving a value from one field to another breaks the signature', () => {
      fc.assert(
        fc.property(secretArb, fieldArb, fieldArb, value, (secret, from, to, v) => {
          fc.pre(from !== to);
          const sig = signLink(secret, { [from]: v });
          expect(signatureMatches(secret, { [to]: v, sig })).to.equal(false);
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('checkLinkShape', () => {
    const now = new Date('2026-12-20T00:00:00.000Z');
    const nowS = Math.floor(now.getTime() / 1000);
    const SELLER = '5b0e9f3c-2a71-4d8e-9c4b-7f1a2b3c4d5e';
    const good = (over: LinkParams = {}): LinkParams => ({
      seller: SELLER,
      item: 'Kamera',
      ref: 'ord-1',
      v: '1',
      expires: String(nowS + 3600),
      sig: 'a'.repeat(64),
      ...over,
    });
    const without = (field: keyof LinkParams): LinkParams => {
      const p = good();
      delete p[field];
      return p;
    };

    it('returns the seller (lowercased), ref, version and expiry of a well-formed link', () => {
      expect(checkLinkShape(good({ seller: SELLER.toUpperCase() }), now)).to.deep.equal({
        sellerId: SELLER,
        ref: 'ord-1',
        version: 1,
        expires: new Date((nowS + 3600) * 1000),
      });
    });

    it('SIGNATURE_REQUIRED (400) without sig or with an empty one, and with no partner field at all', () => {
      expect(shapeError(without('sig'), now)).to.deep.equal({ status: 400, code: 'SIGNATURE_REQUIRED' });
      expect(shapeError(good({ sig: '' }), now)).to.deep.equal({ status: 400, code: 'SIGNATURE_REQUIRED' });
      expect(shapeError({}, now)).to.deep.equal({ status: 400, code: 'SIGNATURE_REQUIRED' });
    });

    it('UNSUPPORTED_SIG_VERSION (422) for any v other than 1', () => {
      for (const v of ['2', '0', '1.0', '01', 'v1', ' 1']) {
        expect(shapeError(good({ v }), now), v).to.deep.equal({ status: 422, code: 'UNSUPPORTED_SIG_VERSION' });
      }
    });

    it('SIG_INCOMPLETE (422) when ref, expires or v is missing or empty', () => {
      for (const field of ['ref', 'expires', 'v'] as const) {
        expect(shapeError(without(field), now), `${field} missing`).to.deep.equal({ status: 422, code: 'SIG_INCOMPLETE' });
      }
      for (const field of ['ref', 'expires'] as const) {
        expect(shapeError(good({ [field]: '' }), now), `${field} empty`).to.deep.equal({ status: 422, code: 'SIG_INCOMPLETE' });
      }
    });

    it('INVALID_EXPIRES (422) for anything but a unix timestamp in whole seconds', () => {
      for (const expires of ['tomorrow', '1.5', '-1', '1e9', ' 1798761600', '2026-12-21T00:00:00Z', String((nowS + 60) * 1000)]) {
        expect(shapeError(good({ expires }), now), expires).to.deep.equal({ status: 422, code: 'INVALID_EXPIRES' });
      }
    });

    it('LINK_EXPIRED (422) at and before now; one second ahead is still open', () => {
      expect(shapeError(good({ expires: String(nowS) }), now)).to.deep.equal({ status: 422, code: 'LINK_EXPIRED' });
      expect(shapeError(good({ expires: String(nowS - 1) }), now)).to.deep.equal({ status: 422, code: 'LINK_EXPIRED' });
      expect(shapeError(good({ expires: String(nowS + 1) }), now)).to.equal(null);
    });

    it('EXPIRES_TOO_FAR (422) beyond 30 days; exactly 30 days is accepted', () => {
      expect(MAX_LINK_LIFETIME_SECONDS).to.equal(2_592_000);
      expect(shapeError(good({ expires: String(nowS + 2_592_000) }), now)).to.equal(null);
      expect(shapeError(good({ expires: String(nowS + 2_592_001) }), now)).to.deep.equal({ status: 422, code: 'EXPIRES_TOO_FAR' });
    });

    it('property: expiry is open exactly for 1 second to 30 days ahead', () => {
      fc.assert(
        fc.property(fc.integer({ min: -5_000_000, max: 5_000_000 }), (offset) => {
          const got = shapeError(good({ expires: String(nowS + offset) }), now);
          if (offset <= 0) expect(got).to.deep.equal({ status: 422, code: 'LINK_EXPIRED' });
          else if (offset > 2_592_000) expect(got).to.deep.equal({ status: 422, code: 'EXPIRES_TOO_FAR' });
          else expect(got).to.equal(null);
        }),
        { numRuns: 300 },
      );
    });

    it('INVALID_SELLER (422) for a missing seller or one that is not a UUID v4', () => {
      for (const seller of ['', 'seller-1', '5b0e9f3c2a714d8e9c4b7f1a2b3c4d5e', '5b0e9f3c-2a71-1d8e-9c4b-7f1a2b3c4d5e', '5b0e9f3c-2a71-4d8e-7c4b-7f1a2b3c4d5e']) {
        expect(shapeError(good({ seller }), now), seller).to.deep.equal({ status: 422, code: 'INVALID_SELLER' });
      }
      expect(shapeError(without('seller'), now)).to.deep.equal({ status: 422, code: 'INVALID_SELLER' });
    });

    it('reports in the documented order: signature, version, completeness, expiry format, expiry, seller', () => {
      expect(shapeError({ v: '2', seller: 'x' }, now)).to.deep.equal({ status: 400, code: 'SIGNATURE_REQUIRED' });
      expect(shapeError(good({ v: '2', ref: undefined, seller: 'x' }), now)).to.deep.equal({ status: 422, code: 'UNSUPPORTED_SIG_VERSION' });
      expect(shapeError(good({ ref: undefined, expires: 'soon', seller: 'x' }), now)).to.deep.equal({ status: 422, code: 'SIG_INCOMPLETE' });
      expect(shapeError(good({ expires: 'soon', seller: 'x' }), now)).to.deep.equal({ status: 422, code: 'INVALID_EXPIRES' });
      expect(shapeError(good({ expires: String(nowS - 10), seller: 'x' }), now)).to.deep.equal({ status: 422, code: 'LINK_EXPIRED' });
      expect(shapeError(good({ expires: String(nowS + 2_592_001), seller: 'x' }), now)).to.deep.equal({ status: 422, code: 'EXPIRES_TOO_FAR' });
    });
  });
});

import { expect } from 'chai';
import { decryptSecret, encryptSecret, randomDigits, safeEqual } from '../../shared/crypto.js';
import { assertRupiah, sumRupiah } from '../../shared/money.js';
import { canonicalJson } from '../../shared/idempotency.js';

describe('crypto and money helpers', () => {
  it('seals and opens secrets with AES-256-GCM, refusing tampering and other keys', () => {
    const sealed = encryptSecret('kode 123456');
    expect(sealed).to.not.contain('123456');
    expect(decryptSecret(sealed)).to.equal('kode 123456');
    const parts = sealed.split('.');
    const tampered = [...parts.slice(0, 3), Buffer.from('x').toString('base64url')].join('.');
    expect(() => decryptSecret(tampered)).to.throw();
    expect(() => decryptSecret(sealed, Buffer.alloc(32, 1))).to.throw();
  });

  it('draws 6-digit codes of digits only', () => {
    for (let i = 0; i < 50; i++) expect(randomDigits(6)).to.match(/^\d{6}$/);
  });

  it('compares strings in constant time semantics', () => {
    expect(safeEqual('abc', 'abc')).to.equal(true);
    expect(safeEqual('abc', 'abd')).to.equal(false);
    expect(safeEqual('abc', 'abcd')).to.equal(false);
  });

  it('keeps money in safe whole rupiah', () => {
    expect(sumRupiah([10_000, -2_500, 1])).to.equal(7_501);
    expect(() => assertRupiah(10.5)).to.throw(RangeError);
    expect(() => sumRupiah([Number.MAX_SAFE_INTEGER, 1])).to.throw(RangeError);
  });

  it('hashes bodies canonically (key order does not matter)', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).to.equal(canonicalJson({ a: [1, { c: 3, d: 2 }], b: 1 }));
    expect(canonicalJson({ a: 1 })).to.not.equal(canonicalJson({ a: '1' }));
  });
});

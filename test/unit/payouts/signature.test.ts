/**
 * The staff signature over a payout destination (shared/payouts/signature.ts; spec 1, D7):
 * stable for the same destination, different when any signed field changes, keyed by the
 * service's encryption key (not a plain hash anyone could recompute), stored as `v2.` and
 * base64url; version 2 (issue 42) signs the label and live or sandbox too, and a version 1
 * signature is never accepted.
 */
import { createHash, createHmac } from 'node:crypto';
import { expect } from 'chai';
import { config } from '../../../shared/config.js';
import { canonicalDestination, signDestination, signatureMatches, type Destination } from '../../../shared/payouts/signature.js';

const base: Destination = {
  instructionId: '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed',
  workspaceId: '6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b',
  counterpartyId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  label: 'Rekening utama',
  bankName: 'BCA',
  accountHolder: 'PT Pemasok Jaya',
  accountNumber: '1234567890',
  livemode: true,
};

describe('payout destination signature', () => {
  it('is HMAC-SHA256 under a key derived from the encryption key, over the canonical fields, base64url', () => {
    const key = createHmac('sha256', config.encryptionKey).update('payout-instruction-signature/v1').digest();
    const expected = createHmac('sha256', key).update(canonicalDestination(base)).digest('base64url');
    const sig = signDestination(base);
    expect(sig).to.equal(`v2.${expected}`);
    expect(sig).to.match(/^v2\.[A-Za-z0-9_-]{43}$/);
    // Not a plain hash of the fields (the database alone cannot make one), nor keyed by the raw encryption key.
    expect(sig).to.not.equal(`v2.${createHash('sha256').update(canonicalDestination(base)).digest('base64url')}`);
    expect(sig).to.not.equal(`v2.${createHmac('sha256', config.encryptionKey).update(canonicalDestination(base)).digest('base64url')}`);
  });

  it('is the same for the same destination (and id letter case), whatever order the fields were given in', () => {
    const reordered: Destination = {
      accountNumber: base.accountNumber,
      accountHolder: base.accountHolder,
      bankName: base.bankName,
      counterpartyId: base.counterpartyId.toUpperCase(),
      workspaceId: base.workspaceId,
      instructionId: base.instructionId,
      livemode: true,
      label: base.label,
    };
    expect(signDestination(reordered)).to.equal(signDestination(base));
    expect(signatureMatches(reordered, signDestination(base))).to.equal(true);
  });

  it('changes when any signed field changes', () => {
    const sig = signDestination(base);
    const variants: Partial<Destination>[] = [
      { instructionId: '2b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed' },
      { workspaceId: '7ec0bd7f-11c0-43da-975e-2a8ad9ebae0b' },
      { counterpartyId: '4f2504e0-4f89-41d3-9a0c-0305e82c3301' },
      { bankName: 'BNI' },
      { bankName: 'BCA ' },
      { accountHolder: 'PT Pemasok Jaya Abadi' },
      { accountNumber: '1234567891' },
      { accountNumber: '01234567890' },
      { label: 'Rekening lain' },
      { livemode: false },
    ];
    for (const v of variants) {
      const d = { ...base, ...v };
      expect(signDestination(d), JSON.stringify(v)).to.not.equal(sig);
      expect(signatureMatches(d, sig), JSON.stringify(v)).to.equal(false);
    }
  });

  it('keeps fields apart: moving text from one field to the next is another signature', () => {
    const a = { ...base, bankName: 'BCA', accountHolder: 'X Y' };
    const b = { ...base, bankName: 'BCA X', accountHolder: 'Y' };
    expect(signDestination(a)).to.not.equal(signDestination(b));
  });

  it('matches only its own signature: empty, missing, truncated or altered signatures are refused', () => {
    const sig = signDestination(base);
    expect(signatureMatches(base, sig)).to.equal(true);
    expect(signatureMatches(base, null)).to.equal(false);
    expect(signatureMatches(base, undefined)).to.equal(false);
    expect(signatureMatches(base, '')).to.equal(false);
    expect(signatureMatches(base, sig.slice(0, -1))).to.equal(false);
    expect(signatureMatches(base, `${sig}A`)).to.equal(false);
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    expect(signatureMatches(base, flipped)).to.equal(false);
  });

  it('the canonical text names every field, the label and live or sandbox (version 2)', () => {
    const text = canonicalDestination(base);
    expect(JSON.parse(text)).to.deep.equal({
      v: 2,
      account_holder: 'PT Pemasok Jaya',
      account_number: '1234567890',
      bank_name: 'BCA',
      counterparty_id: base.counterpartyId,
      instruction_id: base.instructionId,
      label: 'Rekening utama',
      livemode: true,
      workspace_id: base.workspaceId,
    });
  });

  it('a sandbox signature never matches for live money, nor a live one for sandbox money', () => {
    const sandbox = signDestination({ ...base, livemode: false });
    expect(signatureMatches({ ...base, livemode: false }, sandbox)).to.equal(true);
    expect(signatureMatches({ ...base, livemode: true }, sandbox)).to.equal(false);
    expect(signatureMatches({ ...base, livemode: false }, signDestination(base))).to.equal(false);
  });

  it('refuses a version 1 signature (the form before issue 42: no label, no livemode), even one the key made', () => {
    const key = createHmac('sha256', config.encryptionKey).update('payout-instruction-signature/v1').digest();
    const v1Text = JSON.stringify({
      v: 1,
      account_holder: base.accountHolder,
      account_number: base.accountNumber,
      bank_name: base.bankName,
      counterparty_id: base.counterpartyId,
      instruction_id: base.instructionId,
      workspace_id: base.workspaceId,
    });
    const v1 = createHmac('sha256', key).update(v1Text).digest('base64url');
    for (const livemode of [true, false]) {
      expect(signatureMatches({ ...base, livemode }, v1)).to.equal(false);
      expect(signatureMatches({ ...base, livemode }, `v2.${v1}`)).to.equal(false);
    }
    // The MAC of a version 2 text without its prefix is refused too.
    expect(signatureMatches(base, signDestination(base).slice(3))).to.equal(false);
  });
});

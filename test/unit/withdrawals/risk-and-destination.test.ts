/**
 * The pure parts of a withdrawal request: the risk decision from its facts (decision
 * 0008's thresholds), and the destination fields per method (MISSING_DESTINATION, the
 * normalised forms, one key per real destination).
 */
import { expect } from 'chai';
import { AppError } from '../../../shared/errors.js';
import { assessRisk, RISK, type RiskFacts } from '../../../shared/withdrawals/risk.js';
import { parseAmount, parseDestination, parseMethod } from '../../../shared/withdrawals/service.js';
import { FALLBACK_WITHDRAW_LIMITS } from '../../../shared/withdrawals/fees.js';

const facts = (f: Partial<RiskFacts> = {}): RiskFacts => ({
  earlierCount: 2,
  recentCount: 0,
  largestPaid: 1_000_000,
  paidToDestination: 1,
  lastPaidDestination: 'dest',
  otherAccounts: 0,
  ...f,
});

function codeOf(work: () => unknown): { code: string; extras: Record<string, unknown> } {
  try {
    work();
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, extras: err.extras };
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('withdrawal risk: the decision', () => {
  it('allows a known destination, a usual amount, a quiet history', () => {
    expect(assessRisk(500_000, 'dest', facts())).to.deep.equal({ action: 'allow', flags: [] });
  });

  it('flags a first withdrawal and a new destination, allowing them under the review amount', () => {
    const first = facts({ earlierCount: 0, largestPaid: 0, paidToDestination: 0, lastPaidDestination: null });
    expect(assessRisk(RISK.newDestinationReviewAmount - 1000, 'dest', first)).to.deep.equal({ action: 'allow', flags: ['first_withdrawal', 'new_destination'] });
    expect(assessRisk(RISK.newDestinationReviewAmount, 'dest', first)).to.deep.equal({ action: 'review', flags: ['first_withdrawal', 'new_destination'] });
  });

  it('flags a changed destination (the last payout went elsewhere)', () => {
    expect(assessRisk(500_000, 'other', facts({ paidToDestination: 0 }))).to.deep.equal({ action: 'allow', flags: ['new_destination', 'changed_destination'] });
    // Used before, but not last time: changed, not new.
    expect(assessRisk(500_000, 'older', facts({ paidToDestination: 1 }))).to.deep.equal({ action: 'allow', flags: ['changed_destination'] });
    expect(assessRisk(5_000_000, 'older', facts({ paidToDestination: 1 })).action).to.equal('review');
  });

  it('holds an amount far above the history for review', () => {
    expect(assessRisk(5_000_000, 'dest', facts())).to.deep.equal({ action: 'allow', flags: [] });
    expect(assessRisk(5_000_001, 'dest', facts())).to.deep.equal({ action: 'review', flags: ['amount_above_history'] });
    // No paid history: the fixed threshold.
    const none = facts({ largestPaid: 0 });
    expect(assessRisk(RISK.noHistoryAmount - 1, 'dest', none).flags).to.not.include('amount_above_history');
    expect(assessRisk(RISK.noHistoryAmount, 'dest', none).flags).to.include('amount_above_history');
  });

  it('reviews many recent withdrawals and blocks a burst', () => {
    expect(assessRisk(100_000, 'dest', facts({ recentCount: RISK.recentReview - 1 })).action).to.equal('allow');
    expect(assessRisk(100_000, 'dest', facts({ recentCount: RISK.recentReview }))).to.deep.equal({ action: 'review', flags: ['many_recent_withdrawals'] });
    expect(assessRisk(100_000, 'dest', facts({ recentCount: RISK.recentBlock }))).to.deep.equal({ action: 'block', flags: ['many_recent_withdrawals'] });
  });

  it('reviews a destination another account uses and blocks one several accounts use', () => {
    expect(assessRisk(100_000, 'dest', facts({ otherAccounts: 1 }))).to.deep.equal({ action: 'review', flags: ['shared_destination'] });
    expect(assessRisk(100_000, 'dest', facts({ otherAccounts: RISK.sharedBlock - 1 })).action).to.equal('review');
    expect(assessRisk(100_000, 'dest', facts({ otherAccounts: RISK.sharedBlock })).action).to.equal('block');
  });
});

describe('withdrawal input: amount, method, destination', () => {
  it('amount: whole rupiah within the limits (digit strings read as numbers)', () => {
    expect(parseAmount(50_000, FALLBACK_WITHDRAW_LIMITS)).to.equal(50_000);
    expect(parseAmount('75000', FALLBACK_WITHDRAW_LIMITS)).to.equal(75_000);
    expect(parseAmount(100_000_000, FALLBACK_WITHDRAW_LIMITS)).to.equal(100_000_000);
    for (const bad of [49_999, 100_000_001, 0, -50_000, 50_000.5, '50000.00', '5e4', ' 50000', null, undefined, true, {}, [], Number.NaN]) {
      const { code, extras } = codeOf(() => parseAmount(bad, FALLBACK_WITHDRAW_LIMITS));
      expect(code, JSON.stringify(bad)).to.equal('INVALID_AMOUNT');
      expect(extras).to.deep.equal({ min: 50_000, max: 100_000_000, step: 1000 });
    }
  });

  it('method: one of the four', () => {
    for (const m of ['bank_transfer', 'dana', 'gopay', 'crypto']) expect(parseMethod(m)).to.equal(m);
    for (const bad of ['ovo', 'BANK_TRANSFER', '', undefined, 1, null]) expect(codeOf(() => parseMethod(bad)).code, String(bad)).to.equal('INVALID_METHOD');
  });

  it('bank transfer: bank, digits-only account number, holder; unknown fields dropped', () => {
    const d = parseDestination('bank_transfer', { bank_name: ' BCA ', account_number: '123-456 7890', account_holder: 'Budi  Santoso', extra: 'x' });
    expect(d.details).to.deep.equal({ bank_name: 'BCA', account_number: '1234567890', account_holder: 'Budi Santoso' });
    expect(d.key).to.match(/^[0-9a-f]{64}$/);
    expect(parseDestination('bank_transfer', { bank_name: 'bca', account_number: '1234567890', account_holder: 'Someone Else' }).key).to.equal(d.key);
    expect(parseDestination('bank_transfer', { bank_name: 'BNI', account_number: '1234567890', account_holder: 'Budi' }).key).to.not.equal(d.key);
  });

  it('bank transfer: names every missing or malformed field', () => {
    const { code, extras } = codeOf(() => parseDestination('bank_transfer', { bank_name: 'BCA', account_number: '12ab' }));
    expect(code).to.equal('MISSING_DESTINATION');
    expect(extras.fields).to.deep.equal(['account_number', 'account_holder']);
    for (const raw of [undefined, null, 'BCA 123', [], 42]) expect(codeOf(() => parseDestination('bank_transfer', raw)).code).to.equal('MISSING_DESTINATION');
    expect(codeOf(() => parseDestination('bank_transfer', { bank_name: ' ', account_number: '1234567890', account_holder: 'A' })).extras.fields).to.deep.equal(['bank_name']);
    expect(codeOf(() => parseDestination('bank_transfer', { bank_name: 'BCA', account_number: 1234567890, account_holder: 'A' })).extras.fields).to.deep.equal(['account_number']);
  });

  it('dana and gopay: an Indonesian mobile number, stored as +62...; one key per number and wallet', () => {
    const a = parseDestination('dana', { phone: '0812-3456-7890' });
    const b = parseDestination('dana', { phone: '+62 812 3456 7890' });
    const c = parseDestination('dana', { phone: '6281234567890' });
    expect(a.details).to.deep.equal({ phone: '+6281234567890' });
    expect(b.key).to.equal(a.key);
    expect(c.key).to.equal(a.key);
    expect(parseDestination('gopay', { phone: '081234567890' }).key).to.not.equal(a.key);
    for (const phone of ['021234567', '0712345678', '+1 415 555 0100', '08123', '', 'abc']) {
      expect(codeOf(() => parseDestination('gopay', { phone })).code, phone).to.equal('MISSING_DESTINATION');
    }
  });

  it('crypto: network and wallet address; hex addresses compared without case', () => {
    const d = parseDestination('crypto', { network: 'ERC20', wallet_address: '0xABCDEF0123456789abcdef0123456789ABCDEF01' });
    expect(d.details).to.deep.equal({ network: 'ERC20', wallet_address: '0xABCDEF0123456789abcdef0123456789ABCDEF01' });
    expect(parseDestination('crypto', { network: 'erc20', wallet_address: '0xabcdef0123456789abcdef0123456789abcdef01' }).key).to.equal(d.key);
    expect(codeOf(() => parseDestination('crypto', { network: 'ERC20' })).extras.fields).to.deep.equal(['wallet_address']);
    expect(codeOf(() => parseDestination('crypto', { network: 'E', wallet_address: 'short' })).extras.fields).to.deep.equal(['network', 'wallet_address']);
  });
});

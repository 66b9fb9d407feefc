/** The payment transition table (shared/payments/states.ts): the moves the services rely on. */
import { expect } from 'chai';
import { allows, PAYMENT_STATUSES, PAYMENT_TRANSITIONS } from '../../../shared/payments/states.js';

describe('payment states', () => {
  it('a paid report settles any unpaid link (a paid report wins over expired and failed), never a paid one', () => {
    expect(PAYMENT_STATUSES.filter((s) => allows('settle', s))).to.have.members(['pending', 'expired', 'failed', 'awaiting_confirmation']);
    expect(allows('settle', 'paid')).to.equal(false);
  });

  it('only a pending manual link is claimed; only a claimed one is confirmed or rejected', () => {
    expect(PAYMENT_STATUSES.filter((s) => allows('claim', s))).to.deep.equal(['pending']);
    expect(PAYMENT_STATUSES.filter((s) => allows('confirm', s))).to.deep.equal(['awaiting_confirmation']);
    expect(PAYMENT_STATUSES.filter((s) => allows('reject', s))).to.deep.equal(['awaiting_confirmation']);
  });

  it('expired and failed come only from pending; every move ends in a known status', () => {
    expect(PAYMENT_STATUSES.filter((s) => allows('expire', s))).to.deep.equal(['pending']);
    expect(PAYMENT_STATUSES.filter((s) => allows('fail', s))).to.deep.equal(['pending']);
    for (const t of Object.values(PAYMENT_TRANSITIONS)) expect(PAYMENT_STATUSES).to.include(t.to);
  });
});

/** The ledger's error catalogue (ARCHITECTURE rule 2): refusals a posting answers to its caller. */
import { AppError, fail, type Text } from '../errors.js';

/** Both languages in one English message, as the spec's balance errors have always answered. */
const INSUFFICIENT: Text = { en: 'Saldo tidak mencukupi / insufficient balance', id: 'Saldo tidak mencukupi' };

/** A posting that would leave a non-negative account below zero (400 INSUFFICIENT_BALANCE). */
export class InsufficientFundsError extends AppError {
  constructor() {
    super('badRequest', 'INSUFFICIENT_BALANCE', INSUFFICIENT);
  }
}

export const ledgerErrors = {
  insufficientBalance: () => new InsufficientFundsError(),
  /** The posting key was taken by a concurrent transaction between the check and the insert. */
  postingTaken: () =>
    fail.conflict('CONCURRENT_MODIFICATION', { en: 'This posting was made by another request', id: 'Pencatatan ini sudah dibuat oleh permintaan lain' }),
};

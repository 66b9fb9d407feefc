/**
 * The staff moves on an account's status (spec section 5 rule 2): the one transition
 * table. Each is a compare-and-set (repo.moveStatus); zero rows means the account is
 * missing or in another status, answered 409 INVALID_STATE naming the status found.
 */
import type { UserStatus } from './repo.js';

export type AccountAction = 'suspend' | 'reactivate';

export const ACCOUNT_TRANSITIONS: Record<AccountAction, { from: UserStatus[]; to: UserStatus }> = {
  suspend: { from: ['active'], to: 'suspended' },
  reactivate: { from: ['suspended'], to: 'active' },
};

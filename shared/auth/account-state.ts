/** Which accounts may act (spec section 5 rule 2): every credential check ends here. */
import type { UserRow } from '../users/repo.js';
import { authErrors } from './errors.js';

/** How a refused account is answered: the consumer's words by default, another caller's (a workspace key's) when given. */
export interface AccountRefusals {
  suspended: () => Error;
  inactive: () => Error;
}

/** 403 SUSPENDED / ACCOUNT_INACTIVE for accounts that may not act. */
export function assertCanAct(user: Pick<UserRow, 'status'>, refusals: AccountRefusals = authErrors): void {
  if (user.status === 'suspended') throw refusals.suspended();
  if (user.status !== 'active') throw refusals.inactive();
}

/** The earlier name of `assertCanAct` (api/pages, enterprise). */
export const assertAccountActive = assertCanAct;

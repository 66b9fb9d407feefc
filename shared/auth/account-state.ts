/** Which accounts may act (spec section 5 rule 2): every credential check ends here. */
import type { UserRow } from '../users/repo.js';
import { authErrors } from './errors.js';

/** 403 SUSPENDED / ACCOUNT_INACTIVE for accounts that may not act. */
export function assertCanAct(user: Pick<UserRow, 'status'>): void {
  if (user.status === 'suspended') throw authErrors.suspended();
  if (user.status !== 'active') throw authErrors.inactive();
}

/** The earlier name of `assertCanAct` (api/pages, enterprise). */
export const assertAccountActive = assertCanAct;

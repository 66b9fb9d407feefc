/**
 * Errors of the platform fee routes (enterprise spec 4.5, 7). Access refusals come from
 * the enterprise catalogue (shared/enterprise/errors.ts); the fee routes add only the
 * allocation rule joi cannot see on its own (the workspace default fills what is absent).
 */
import { errors } from '../errors.js';

export const feeErrors = {
  /**
   * `fee_allocation` and `fee_buyer_percent` disagree (buyer with a percent other than 100,
   * seller with one other than 0, split without one): 400 INVALID_BODY with the reason of
   * `resolveAllocation` as a field error of `fee_buyer_percent`, like joi's.
   */
  allocationDisagrees: (reason: string) => errors.invalidField('fee_buyer_percent', reason),
};

export { post, postMany, InsufficientFundsError, UnbalancedPostingError, type Posting, type PostingLine, type PostedEntry } from './post.js';
export { balanceOf, ensureAccounts, accountSpec, SYSTEM_ACCOUNTS, type AccountRef, type SystemAccount } from './accounts.js';
export { checkLedger, type LedgerViolation } from './check.js';

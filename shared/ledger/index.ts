export { post, postMany, InsufficientFundsError, UnbalancedPostingError, MixedCurrencyError, type Posting, type PostingLine, type PostedEntry } from './post.js';
export { balanceOf, ensureAccounts, accountSpec, currencyAccountCode, SYSTEM_ACCOUNTS, CURRENCY_ACCOUNTS, HOME_CURRENCY, type AccountRef, type CurrencyAccount, type SystemAccount } from './accounts.js';
export { checkLedger, type LedgerViolation } from './check.js';

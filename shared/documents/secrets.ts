/**
 * What a deal note must not carry (enterprise spec 4.7: "Notes must not contain bank
 * numbers or passwords"). One pure function, `findSecret`, with deliberately simple rules
 * that err on the side of refusing; the caller answers 400 INVALID_BODY on `body` with the
 * kind's message.
 *
 * 1. `account_number`: a run of 10 or more digits, where a single space or dash between two
 *    digits is ignored ("1234 5678 90", "123-456-7890"). Dots and commas are NOT ignored, so
 *    amounts written the usual way ("Rp 10.000.000", "1,000,000,000") are short runs. Not
 *    counted: a run right after a currency ("Rp", "IDR", "USD", "SGD"); dates
 *    (2024-01-15, 15/01/2024, 15-01-2024) and clock times (10:30). Phone numbers and
 *    identity numbers of 10 or more digits ARE refused (they are personal data too).
 * 2. `password`: a secret word (password, passwd, pwd, passcode, kata sandi, sandi, pin, otp,
 *    kode otp, kode verifikasi, token, secret, api key, access key, client secret) followed
 *    by `:` or `=` and a value ("password: x", "pwd=abc", "PIN: 1234"); "otp"/"pin"/"kode
 *    otp" followed by a 4 to 8 digit code ("OTP 123456"); "password"/"kata sandi"/"sandi"
 *    (optionally with "-nya") followed by "is"/"adalah" and a value containing a digit.
 *    The bare words are fine ("kirim OTP ke pembeli", "the password policy").
 * 3. `api_key`: known key shapes: this service's keys (rpk_, rpe_, whsec_), Stripe-style
 *    (sk_live_, sk_test_, rk_live_, rk_test_), GitHub (ghp_, gho_, ghs_, ghu_, ghr_,
 *    github_pat_), Slack (xoxb-, xoxp-, ...), AWS access key ids (AKIA...), JSON web tokens.
 * 4. `token`: any run of 24 or more letters and digits (nothing else between) that has both
 *    a letter and a digit: random tokens, session ids, hex digests. Words joined by `-`,
 *    `_` or `/` are separate runs, so ids (UUIDs), references (DL-000123) and ordinary
 *    links pass; a link whose path holds such a run (a shared-drive file id) is refused.
 */

export type SecretKind = 'account_number' | 'password' | 'api_key' | 'token';

export const SECRET_MESSAGES: Record<SecretKind, string> = {
  account_number:
    'must not contain a bank account number (10 or more digits in a row, spaces and dashes ignored); payout destinations belong in payout instructions',
  password: 'must not contain a password, PIN or one-time code',
  api_key: 'must not contain an API key or access token',
  token: 'must not contain a secret token (24 or more letters and digits in a row)',
};

/** Dates and clock times: taken out before digit runs are counted. */
const DATES_AND_TIMES = [/\b\d{4}-\d{1,2}-\d{1,2}\b/g, /\b\d{1,2}[/-]\d{1,2}[/-]\d{4}\b/g, /\b\d{1,2}:\d{2}(?::\d{2})?\b/g];
/** Ten or more digits, a single space or dash allowed between two digits. */
const DIGIT_RUN = /\d(?:[ -]?\d){9,}/g;
const CURRENCY_BEFORE = /(?:\brp|\bidr|\busd|\bsgd)\.?\s*$/i;

const SECRET_WORD = String.raw`(?:password|passwd|pwd|passcode|kata\s*sandi|sandi|pin|otp|kode\s*otp|kode\s*verifikasi|token|secret|api[\s_-]?key|access[\s_-]?key|client[\s_-]?secret)`;
const PASSWORDS = [
  new RegExp(String.raw`\b${SECRET_WORD}(?:\s*nya)?\s*[:=]\s*\S`, 'i'),
  /\b(?:otp|pin|kode\s*otp)(?:\s*nya)?\s*(?:adalah|is)?\s*\d{4,8}\b/i,
  /\b(?:password|kata\s*sandi|sandi)(?:\s*nya)?\s+(?:is|adalah)\s+\S*\d\S*/i,
];

const API_KEYS = [
  /\b(?:rpk|rpe|whsec)_[A-Za-z0-9+/=_-]{8,}/,
  /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,}/,
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
];

const ALNUM_RUN = /[A-Za-z0-9]{24,}/g;

function hasAccountNumber(text: string): boolean {
  let rest = text;
  for (const re of DATES_AND_TIMES) rest = rest.replace(re, ' # ');
  for (const m of rest.matchAll(DIGIT_RUN)) {
    if (!CURRENCY_BEFORE.test(rest.slice(0, m.index))) return true;
  }
  return false;
}

function hasToken(text: string): boolean {
  for (const m of text.matchAll(ALNUM_RUN)) if (/[A-Za-z]/.test(m[0]) && /\d/.test(m[0])) return true;
  return false;
}

/** The kind of secret the text carries, or null; checked in the order api_key, password, account_number, token (a key is named as a key, not as a token). */
export function findSecret(text: string): SecretKind | null {
  if (API_KEYS.some((re) => re.test(text))) return 'api_key';
  if (PASSWORDS.some((re) => re.test(text))) return 'password';
  if (hasAccountNumber(text)) return 'account_number';
  if (hasToken(text)) return 'token';
  return null;
}

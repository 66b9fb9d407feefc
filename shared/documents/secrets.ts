/**
 * What a deal note must not carry (enterprise spec 4.7: "Notes must not contain bank
 * numbers or passwords"). One pure function, `findSecret`, with deliberately simple rules
 * that err on the side of refusing; the caller answers 400 INVALID_BODY on `body` with the
 * kind's message.
 *
 * 1. `account_number`: 10 or more digits, where ONE space, dot or dash between two digits
 *    is ignored ("1234567890", "1234.5678.90", "1234-5678-9012", "1234 5678 9012",
 *    "Rek. 1234567890"). A currency in front changes nothing ("IDR 1234567890" is refused:
 *    an amount of 10 or more digits is written grouped). Not counted, taken out first:
 *    - amounts written the usual way: a head of 1 to 3 digits (not starting with 0) and
 *      groups of exactly three, all with dots ("1.500.000", "Rp 1.500.000,00") or all with
 *      commas ("1,000,000,000", "USD 1,000,000.50"), at most 13 digits (a deal holds at
 *      most 20 x 50,000,000,000 = 1,000,000,000,000); grouped with spaces only right after
 *      a currency ("IDR 10 000 000 000": spaces are also how account numbers and phone
 *      numbers are read out). So "1.234.567.890" passes as an amount: written that way it
 *      is one, and a note cannot tell it from an account number so written;
 *    - dates (2024-01-15, 2024.01.15, 15/01/2024, 15-01-2024, 15.01.2024) and clock times
 *      (10:30, 10.30), each only as a whole (not a piece of a longer dotted number).
 *    Phone numbers and identity numbers of 10 or more digits ARE refused (personal data
 *    too); so are longer tracking numbers and IP addresses with 10 or more digits (rare in a
 *    deal note; the message says what to change). Short numbers pass: invoice 12345,
 *    PO-2024-001, "3 unit", a 9-digit receipt number.
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
    'must not contain a bank account number (10 or more digits, also with spaces, dots or dashes between them); write amounts grouped (Rp 1.500.000.000); payout destinations belong in payout instructions',
  password: 'must not contain a password, PIN or one-time code',
  api_key: 'must not contain an API key or access token',
  token: 'must not contain a secret token (24 or more letters and digits in a row)',
};

/** A date or time that is not a piece of a longer number (nothing numeric joined before or after). */
const wholeDateOrTime = (body: string): RegExp => new RegExp(String.raw`(?<!\d)(?<!\d[.,:/-])(?:${body})(?!\d|[.,:/-]\d)`, 'g');
/** An amount that is not a piece of a longer number; a dash may join two (a range: "1.500.000-2.000.000"). */
const wholeAmount = (body: string, flags = 'g'): RegExp => new RegExp(String.raw`(?<!\d)(?<!\d[.,])(?:${body})(?!\d|[.,]\d)`, flags);

/** Dates and clock times: taken out before digit runs are counted. */
const DATES_AND_TIMES = [
  wholeDateOrTime(String.raw`\d{4}([-./])\d{1,2}\1\d{1,2}`),
  wholeDateOrTime(String.raw`\d{1,2}([-./])\d{1,2}\1\d{4}`),
  wholeDateOrTime(String.raw`\d{1,2}[:.][0-5]\d(?::[0-5]\d)?`),
];

const CURRENCY = String.raw`(?:\brp|\bidr|\busd|\bsgd|\beur|\$|€)\.?\s*`;
/** Amounts written grouped (the rules above); the digit cap is checked on each match. */
const AMOUNTS = [
  wholeAmount(String.raw`[1-9]\d{0,2}(?:\.\d{3})+(?:,\d{1,2})?`),
  wholeAmount(String.raw`[1-9]\d{0,2}(?:,\d{3})+(?:\.\d{1,2})?`),
  wholeAmount(String.raw`(?<=${CURRENCY})[1-9]\d{0,2}(?:\s\d{3})+(?:[.,]\d{1,2})?(?!\s\d)`, 'gi'),
];
const MAX_AMOUNT_DIGITS = 13;
const integerDigits = (amount: string): number => amount.replace(/[.,]\d{1,2}$/, '').replace(/\D/g, '').length;

/** Ten or more digits, one space, dot or dash allowed between two digits. */
const DIGIT_RUN = /\d(?:[\s.-]?\d){9,}/;

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
  for (const re of AMOUNTS) rest = rest.replace(re, (amount) => (integerDigits(amount) <= MAX_AMOUNT_DIGITS ? ' # ' : amount));
  return DIGIT_RUN.test(rest);
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

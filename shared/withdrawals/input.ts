/**
 * The checks of a withdrawal request's fields (consumer spec 4.4): the amount within the
 * limits, the method, and the method's destination fields, normalised. Each refusal names
 * what is wrong (INVALID_AMOUNT, INVALID_METHOD, MISSING_DESTINATION).
 */
import { createHash } from 'node:crypto';
import { withdrawalErrors } from './errors.js';
import type { WithdrawLimits } from './fees.js';
import { DESTINATION_FIELDS, METHODS, type WithdrawalMethod } from './states.js';

/** A whole number of rupiah within the limits (a digit string is read as the number it spells). */
export function parseAmount(value: unknown, limits: WithdrawLimits): number {
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) throw withdrawalErrors.invalidAmount(limits, 'Not a whole positive number');
  if (n < limits.minIdr) throw withdrawalErrors.invalidAmount(limits, 'Below the minimum');
  if (n > limits.maxIdr) throw withdrawalErrors.invalidAmount(limits, 'Above the maximum');
  return n;
}

export function parseMethod(value: unknown): WithdrawalMethod {
  if (typeof value !== 'string' || !(METHODS as readonly string[]).includes(value)) throw withdrawalErrors.invalidMethod(METHODS);
  return value as WithdrawalMethod;
}

export interface Destination {
  /** What is stored and sent to the payout provider (normalised). */
  details: Record<string, string>;
  /** sha256 of the method and the normalised destination. */
  key: string;
}

type FieldCheck = (raw: string) => string | null;

const text = (max: number): FieldCheck => (raw) => {
  const v = raw.trim().replace(/\s+/g, ' ');
  return v.length >= 1 && v.length <= max ? v : null;
};

const CHECKS: Record<string, { check: FieldCheck; hint: string }> = {
  bank_name: { check: text(100), hint: '1 to 100 characters' },
  account_holder: { check: text(100), hint: '1 to 100 characters' },
  account_number: {
    check: (raw) => {
      const v = raw.replace(/[\s.-]/g, '');
      return /^[0-9]{5,30}$/.test(v) ? v : null;
    },
    hint: '5 to 30 digits',
  },
  phone: {
    // Indonesian mobile numbers: 08..., 628... or +628..., stored as +628...
    check: (raw) => {
      const v = raw.replace(/[\s().-]/g, '');
      const m = /^(?:\+?62|0)(8[0-9]{7,12})$/.exec(v);
      return m ? `+62${m[1]}` : null;
    },
    hint: 'an Indonesian mobile number such as 081234567890',
  },
  network: {
    check: (raw) => {
      const v = raw.trim();
      return /^[A-Za-z0-9_-]{2,32}$/.test(v) ? v : null;
    },
    hint: '2 to 32 letters, digits, _ or -',
  },
  wallet_address: {
    check: (raw) => {
      const v = raw.trim();
      return /^[A-Za-z0-9:_-]{16,128}$/.test(v) ? v : null;
    },
    hint: '16 to 128 letters or digits',
  },
};

/** The destination fields of the method, checked and normalised; MISSING_DESTINATION names what is wrong. */
export function parseDestination(method: WithdrawalMethod, raw: unknown): Destination {
  const needed = DESTINATION_FIELDS[method];
  const given = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const details: Record<string, string> = {};
  const wrong: string[] = [];
  for (const field of needed) {
    const value = Object.prototype.hasOwnProperty.call(given, field) ? given[field] : undefined;
    const normalised = typeof value === 'string' ? CHECKS[field]!.check(value) : null;
    if (normalised === null) wrong.push(field);
    else details[field] = normalised;
  }
  if (wrong.length > 0) {
    const hints = wrong.map((f) => `${f} (${CHECKS[f]!.hint})`).join(', ');
    throw withdrawalErrors.missingDestination(method, hints, wrong);
  }
  const identity =
    method === 'bank_transfer'
      ? `${details.bank_name!.toLowerCase()}|${details.account_number}`
      : method === 'crypto'
        ? `${details.network!.toLowerCase()}|${/^0x[0-9a-f]+$/i.test(details.wallet_address!) ? details.wallet_address!.toLowerCase() : details.wallet_address}`
        : details.phone!;
  return { details, key: createHash('sha256').update(`${method}|${identity}`).digest('hex') };
}

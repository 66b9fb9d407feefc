/**
 * Sandbox seed (idempotent): the first admin from ADMIN_EMAIL / ADMIN_PASSWORD, the
 * sandbox gateway (SANDBOX_MODE only), fee settings and the system ledger accounts.
 */
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { hashPassword } from '../auth/passwords.js';
import { accountSpec, CURRENCY_ACCOUNTS, ensureAccounts, HOME_CURRENCY, SYSTEM_ACCOUNTS, type SystemAccount } from '../ledger/index.js';
import * as users from '../users/repo.js';

export const DEFAULT_FEE_SETTINGS = {
  // Escrow fee fallback of the spec (section 4.2): 1% with a Rp2.000 floor.
  escrow_fee: { percent_bp: 100, min_idr: 2000 },
  // Withdrawal fee fallback (section 4.4): fixed Rp5.000, floor Rp2.500, cap Rp25.000.
  withdraw_fee: { type: 'fixed', value: 5000, min_idr: 2500, max_idr: 25000, loyalty_discount_percent: 0 },
  withdraw_limits: { min_idr: 50000, max_idr: 100000000, step_idr: 1000 },
} as const;

export interface SeedResult {
  admin: 'created' | 'promoted' | 'present' | 'not configured' | 'refused: e-mail belongs to a non-staff account';
}

/**
 * Creates an admin, or promotes an existing account when `promote` is set (the CLI). The
 * seed never promotes: someone could have registered the configured e-mail first.
 */
export async function ensureAdmin(knex: Knex, email: string, password: string | null, promote = false): Promise<SeedResult['admin']> {
  const normalised = email.trim().toLowerCase();
  const existing = await users.findByEmail(knex, normalised);
  const now = clock.now();
  if (existing) {
    if (existing.role === 'admin') return 'present';
    if (!promote) return 'refused: e-mail belongs to a non-staff account';
    await users.update(knex, existing.id, { role: 'admin', updated_at: now });
    return 'promoted';
  }
  if (!password) throw new Error(`no account for ${normalised}; a password is needed to create it`);
  const base = (normalised.split('@')[0] ?? 'admin').replace(/[^a-z0-9_.]/g, '').slice(0, 24) || 'admin';
  let username = base.length >= 3 ? base : `${base}_admin`;
  for (let i = 2; await users.usernameTaken(knex, username); i++) username = `${base.slice(0, 24)}_${i}`;
  await users.insert(knex, {
    email: normalised,
    username,
    full_name: 'Operator',
    password_hash: await hashPassword(password),
    role: 'admin',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  });
  return 'created';
}

export async function seedSandbox(knex: Knex): Promise<SeedResult> {
  const now = clock.now();
  await ensureAccounts(
    knex,
    // The IDR system accounts; an enterprise account in another currency opens with its first posting.
    (Object.keys(SYSTEM_ACCOUNTS) as SystemAccount[]).map((system) =>
      (CURRENCY_ACCOUNTS as readonly SystemAccount[]).includes(system)
        ? accountSpec({ system: system as (typeof CURRENCY_ACCOUNTS)[number], currency: HOME_CURRENCY })
        : accountSpec({ system: system as Exclude<SystemAccount, (typeof CURRENCY_ACCOUNTS)[number]> }),
    ),
  );
  for (const [key, value] of Object.entries(DEFAULT_FEE_SETTINGS)) {
    await knex('settings').insert({ key, value: JSON.stringify(value), updated_at: now }).onConflict('key').ignore();
  }
  if (config.sandboxMode) {
    await knex('payment_gateways')
      .insert({
        provider: 'sandbox',
        display_name: 'Sandbox gateway',
        supported_methods: ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'],
        is_manual: false,
        enabled: true,
        config: null,
        fee_percent: '0.7',
        fee_fixed: 0,
        created_at: now,
        updated_at: now,
      })
      .onConflict('provider')
      .ignore();
  }
  let admin: SeedResult['admin'] = 'not configured';
  if (config.adminEmail) admin = await ensureAdmin(knex, config.adminEmail, config.adminPassword || null);
  return { admin };
}

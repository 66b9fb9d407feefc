import type { Db } from '../db.js';

export type UserRole = 'user' | 'admin';
export type UserStatus = 'active' | 'suspended' | 'closed' | 'deleting';
/** 'totp' exists only on carried-over accounts; the API offers 'none' and 'email'. */
export type TwoFactorMethod = 'none' | 'email' | 'totp';

export interface UserRow {
  id: string;
  email: string;
  username: string;
  full_name: string;
  phone: string | null;
  password_hash: string | null;
  role: UserRole;
  status: UserStatus;
  kyc_status: string;
  email_verified_at: Date | null;
  two_factor_method: TwoFactorMethod;
  dashboard_tour_completed_at: Date | null;
  social_instagram: string | null;
  social_shopee: string | null;
  social_tiktokshop: string | null;
  balance: number;
  created_at: Date;
  updated_at: Date;
}

export async function findById(trx: Db, id: string): Promise<UserRow | undefined> {
  return (await trx('users').where({ id }).first()) as UserRow | undefined;
}

export async function findByIdForUpdate(trx: Db, id: string): Promise<UserRow | undefined> {
  // NO KEY UPDATE: serialises changes of this account without blocking foreign-key checks of rows that reference it.
  return (await trx('users').where({ id }).forNoKeyUpdate().first()) as UserRow | undefined;
}

export async function findByEmail(trx: Db, email: string): Promise<UserRow | undefined> {
  return (await trx('users').where({ email: email.toLowerCase() }).first()) as UserRow | undefined;
}

export async function usernameTaken(trx: Db, username: string, exceptUserId?: string): Promise<boolean> {
  const q = trx('users').where({ username }).first('id');
  if (exceptUserId) void q.whereNot({ id: exceptUserId });
  return (await q) !== undefined;
}

export async function insert(trx: Db, row: Partial<UserRow> & Pick<UserRow, 'email' | 'username' | 'full_name'>): Promise<UserRow> {
  const [created] = (await trx('users').insert(row).returning('*')) as UserRow[];
  if (!created) throw new Error('users insert returned no row');
  return created;
}

export async function update(trx: Db, id: string, patch: Partial<UserRow>): Promise<UserRow | undefined> {
  const [row] = (await trx('users').where({ id }).update(patch).returning('*')) as UserRow[];
  return row;
}

/** Compare-and-set on status: zero rows means the user is missing or not in `from`. */
export async function moveStatus(trx: Db, id: string, from: UserStatus[], to: UserStatus, now: Date): Promise<UserRow | undefined> {
  const [row] = (await trx('users')
    .where({ id })
    .whereIn('status', from)
    .update({ status: to, updated_at: now })
    .returning('*')) as UserRow[];
  return row;
}

/**
 * Locks the rows of every active admin (in id order, so two callers cannot deadlock) and
 * returns their ids. A concurrent change of an admin's status waits for the caller's
 * transaction, and re-evaluates against the committed state after it.
 */
export async function lockActiveAdmins(trx: Db): Promise<string[]> {
  const rows = await trx<UserRow>('users').where({ role: 'admin', status: 'active' }).orderBy('id').forUpdate().select('id');
  return rows.map((r) => r.id);
}

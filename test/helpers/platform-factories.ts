/**
 * Minimal factories for the platform tests (users rows and opening balances). Feature
 * factories live elsewhere; these only give the ledger something to post against.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { clock } from '../../shared/clock.js';
import { db, type Db } from '../../shared/db.js';
import { post } from '../../shared/ledger/index.js';

export interface PlatformUser {
  id: string;
  username: string;
  email: string;
}

let seq = 0;

/** Inserts a users row directly (balance 0; give it money with `fundUser`). */
export async function createUser(trx: Db = db): Promise<PlatformUser> {
  seq += 1;
  const tag = `${seq}_${randomUUID().slice(0, 8)}`;
  const now = clock.now();
  const rows: PlatformUser[] = await trx('users')
    .insert({
      email: `platform_${tag}@example.test`,
      username: `platform_${tag}`,
      full_name: `Platform User ${seq}`,
      created_at: now,
      updated_at: now,
    })
    .returning(['id', 'username', 'email']);
  return rows[0]!;
}

/** Opening balance from the staff adjustments account (a balanced ledger posting). */
export async function fundUser(userId: string, amount: number, trx: Db = db): Promise<void> {
  await post(trx, {
    kind: 'test.opening_balance',
    lines: [
      { account: { system: 'adjustments' }, amount: -amount },
      { account: { userId }, amount },
    ],
  });
}

export async function userBalance(userId: string, trx: Db = db): Promise<number> {
  const row = (await trx('users').select('balance').where({ id: userId }).first()) as { balance: number } | undefined;
  if (!row) throw new Error(`user ${userId} does not exist`);
  return row.balance;
}

export async function countRows(table: string, trx: Db = db): Promise<number> {
  const result = await trx.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM ??', [table]);
  return result.rows[0]?.n ?? 0;
}

/**
 * Runs `work` in a transaction with every trigger off (`SET LOCAL session_replication_role =
 * replica`; the tests connect as a superuser), to forge states the ledger guard refuses,
 * e.g. a tampered balance for `ledger:check` to find. CHECK constraints still apply;
 * foreign keys and the ledger's balance and append-only triggers do not.
 */
export async function withoutTriggers<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw('SET LOCAL session_replication_role = replica');
    return work(trx);
  });
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(work: PromiseLike<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to be rejected');
}

/**
 * Idempotency keys (spec section 8, ARCHITECTURE rule 5), stored in Postgres per caller
 * and endpoint. The HTTP side lives in api/middleware/idempotency.ts.
 */
import { clock } from './clock.js';
import { config } from './config.js';
import { sha256Hex } from './crypto.js';
import type { Db } from './db.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** A storage failure while claiming: which step failed decides the answer's code. */
export class IdempotencyStoreError extends Error {
  constructor(readonly step: 'insert' | 'lookup', cause: unknown) {
    super(`idempotency ${step} failed`, { cause });
  }
}

async function step<T>(name: 'insert' | 'lookup', work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new IdempotencyStoreError(name, err);
  }
}

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'conflict' }
  | { kind: 'in_flight' };

export interface KeyRef {
  scope: string;
  endpoint: string;
  key: string;
}

interface Row {
  request_hash: string;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_body: string | null;
  locked_at: Date;
  expires_at: Date;
}

/** Deterministic JSON (object keys sorted) so equal bodies hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(body: unknown): string {
  return sha256Hex(canonicalJson(body ?? null));
}

function where(ref: KeyRef) {
  return { scope: ref.scope, endpoint: ref.endpoint, key: ref.key };
}

/**
 * Claims the key for this request, or says why not. An expired row is replaced; an
 * in-flight row whose lock is older than IDEMPOTENCY_LOCK_SECONDS (its process died) is
 * taken over.
 */
export async function claim(db: Db, ref: KeyRef, hash: string): Promise<ClaimResult> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = clock.now();
    const inserted = await step(
      'insert',
      db('idempotency_keys')
      .insert({
        ...where(ref),
        request_hash: hash,
        state: 'in_flight',
        locked_at: now,
        created_at: now,
        expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      })
        .onConflict(['scope', 'endpoint', 'key'])
        .ignore()
        .returning<unknown[]>('key'),
    );
    if (inserted.length === 1) return { kind: 'claimed' };

    const row = await step('lookup', db('idempotency_keys').where(where(ref)).first<Row | undefined>());
    if (!row) continue; // released between our insert and read: try again
    if (row.expires_at.getTime() <= now.getTime()) {
      await db('idempotency_keys').where(where(ref)).where('expires_at', '<=', now).delete();
      continue;
    }
    if (row.request_hash !== hash) return { kind: 'conflict' };
    if (row.state === 'completed') {
      return { kind: 'replay', response: { status: row.response_status ?? 200, body: storedBody(row.response_body) } };
    }
    const staleBefore = new Date(now.getTime() - config.idempotencyLockSeconds * 1000);
    if (row.locked_at.getTime() < staleBefore.getTime()) {
      const taken = await db('idempotency_keys')
        .where(where(ref))
        .where({ state: 'in_flight', locked_at: row.locked_at })
        .update({ locked_at: now });
      if (taken === 1) return { kind: 'claimed' };
    }
    return { kind: 'in_flight' };
  }
  return { kind: 'in_flight' };
}

/**
 * The answer is stored as its exact JSON text (a text column, not jsonb: jsonb would
 * reorder object keys, and a replay must return the same body the first call sent).
 */
function storedBody(value: string | null): unknown {
  return value === null ? null : (JSON.parse(value) as unknown);
}

/** Stores the first 2xx answer for 24 hours. */
export async function complete(db: Db, ref: KeyRef, response: StoredResponse): Promise<void> {
  const now = clock.now();
  await db('idempotency_keys')
    .where(where(ref))
    .update({
      state: 'completed',
      response_status: response.status,
      response_body: JSON.stringify(response.body ?? null),
      expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    });
}

/** Releases the key after a 4xx/5xx or a thrown error, so a retry runs again. */
export async function release(db: Db, ref: KeyRef): Promise<void> {
  await db('idempotency_keys').where(where(ref)).where({ state: 'in_flight' }).delete();
}

/** Deletes expired keys (run by the timers queue). */
export async function purgeExpired(db: Db): Promise<number> {
  return db('idempotency_keys').where('expires_at', '<=', clock.now()).delete();
}

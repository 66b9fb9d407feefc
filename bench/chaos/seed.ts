/**
 * The chaos run's seed, in its freshly recreated database: users (verified, active) with
 * personal keys; two staff (one for rulings and order moves, one for the edge flows);
 * buyers of their own for the early-callback flows; the sandbox gateway and a manual
 * bank-transfer gateway (`chaos_manual_bca`, `is_manual`, no surcharge).
 */
import type { Knex } from 'knex';
import { HOST } from '../lib/procs.js';
import type { Actor } from './client.js';
import { MANUAL_GATEWAY, type Edge } from './edges.js';

const RACERS = 4;

export async function seedChaos(db: Knex, users: number): Promise<{ actors: Actor[]; admin: Actor; edge: Edge }> {
  const { insertKey } = await import('../../shared/auth/api-keys.js');
  const now = new Date();
  const rows = Array.from({ length: users + 2 + RACERS }, (_, i) => ({
    email: `chaos${i}@chaos.test`,
    username: `chaos_u${i}`,
    full_name: `Chaos ${i}`,
    kyc_status: 'verified',
    email_verified_at: now,
    role: i === users || i === users + 1 ? 'admin' : 'user',
    status: 'active',
    created_at: now,
    updated_at: now,
  }));
  const ids = (await db('users').insert(rows).returning<{ id: string }[]>('id')).map((r) => r.id);
  const everyone: Actor[] = [];
  for (const id of ids) everyone.push({ id, key: (await insertKey(db, id, 'chaos', HOST)).plaintext });
  const gateway = { enabled: true, in_maintenance: false, fee_fixed: 0, created_at: now, updated_at: now };
  await db('payment_gateways')
    .insert({ ...gateway, provider: 'sandbox', display_name: 'Sandbox', supported_methods: ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'], is_manual: false, config: null, fee_percent: '0.7', sort_order: 0 })
    .onConflict('provider')
    .merge();
  await db('payment_gateways')
    .insert({
      ...gateway,
      provider: MANUAL_GATEWAY,
      display_name: 'Transfer BCA (manual)',
      supported_methods: ['bank_transfer'],
      is_manual: true,
      config: JSON.stringify({ bank_name: 'BCA', account_number: '8800112233', account_holder: 'PT Chaos Escrow' }),
      fee_percent: '0',
      sort_order: 1,
    })
    .onConflict('provider')
    .merge();
  return { actors: everyone.slice(0, users), admin: everyone[users]!, edge: { staff: everyone[users + 1]!, racers: everyone.slice(users + 2), db } };
}

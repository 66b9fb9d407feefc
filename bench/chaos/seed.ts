/**
 * The chaos run's seed, in its freshly recreated database: users (verified, active) with
 * personal keys; two staff (one for rulings and order moves, one for the edge flows);
 * buyers of their own for the early-callback flows; the sandbox gateway and a manual
 * bank-transfer gateway (`chaos_manual_bca`, `is_manual`, no surcharge). And the
 * enterprise side (seedEnterprise): workspaces registered through the service, made live
 * (KYB is not the subject), each with its members and personal keys, and staff of their own.
 */
import type { Knex } from 'knex';
import { HOST } from '../lib/procs.js';
import type { Actor } from './client.js';
import type { EnterpriseSeed, Workspace } from './enterprise.js';
import { MANUAL_GATEWAY, type Edge } from './edges.js';

const RACERS = 4;

export async function seedChaos(db: Knex, users: number): Promise<{ actors: Actor[]; admin: Actor; edge: Edge }> {
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
  const everyone = await usersWithKeys(db, rows);
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

type UserSeed = Record<string, unknown> & { email: string };

/** Inserts the users and gives each a personal key. */
async function usersWithKeys(db: Knex, rows: UserSeed[]): Promise<Actor[]> {
  const { insertKey } = await import('../../shared/auth/api-keys.js');
  const ids = (await db('users').insert(rows).returning<{ id: string }[]>('id')).map((r) => r.id);
  const out: Actor[] = [];
  for (const id of ids) out.push({ id, key: (await insertKey(db, id, 'chaos', HOST)).plaintext });
  return out;
}

/** Members of each enterprise workspace beside its owner: operators submit evidence, finance decides and releases. */
export const ENT_OPERATORS = 2;
export const ENT_FINANCE = 3;
/** Enterprise staff of their own (confirmations, verifications, rulings, failed payouts), so the consumer staff's limits stay theirs. */
const ENT_STAFF = 3;

/**
 * `workspaces` workspaces registered through the service (as POST /v1/enterprise/register
 * does; the route itself is dashboard-only and allows 10 sign-ups an hour per address),
 * then made live by a direct update (`is_sandbox` false, `kyb_status` verified) with the
 * four-eyes threshold `fourEyes`; members added as the test factory addMember does.
 */
export async function seedEnterprise(db: Knex, workspaces: number, fourEyes: number): Promise<EnterpriseSeed> {
  const { register } = await import('../../shared/enterprise/service.js');
  const now = new Date();
  const perWorkspace = 1 + ENT_OPERATORS + ENT_FINANCE;
  const user = (i: number, role: 'admin' | 'user'): UserSeed => ({
    email: `chaos-ent${i}@chaos.test`,
    username: `chaos_e${i}`,
    full_name: `Chaos Ent ${i}`,
    kyc_status: 'verified',
    email_verified_at: now,
    role,
    status: 'active',
    created_at: now,
    updated_at: now,
  });
  const people = await usersWithKeys(db, Array.from({ length: workspaces * perWorkspace }, (_, i) => user(i, 'user')));
  const staff = await usersWithKeys(db, Array.from({ length: ENT_STAFF }, (_, i) => user(workspaces * perWorkspace + i, 'admin')));
  const out: Workspace[] = [];
  for (let w = 0; w < workspaces; w += 1) {
    const [owner, ...members] = people.slice(w * perWorkspace, (w + 1) * perWorkspace) as [Actor, ...Actor[]];
    const made = await register(
      { userId: owner.id, userName: `Chaos Ent ${w * perWorkspace}` },
      { legal_name: `PT Chaos Enterprise ${w}`, display_name: `Chaos Ent ${w}`, entity_type: 'pt', nib: String(1_000_000_000_000 + w), country_code: 'ID' },
      { ip: HOST },
    );
    const id = made.workspace.id;
    await db('workspaces').where({ id }).update({ is_sandbox: false, kyb_status: 'verified', four_eyes_threshold: fourEyes, updated_at: now });
    const operators = members.slice(0, ENT_OPERATORS);
    const finance = members.slice(ENT_OPERATORS);
    const joined = new Date(now.getTime() + 1000);
    await db('workspace_members').insert([
      ...operators.map((u) => ({ workspace_id: id, user_id: u.id, role: 'operator', status: 'active', joined_at: joined, created_at: now, updated_at: now })),
      ...finance.map((u) => ({ workspace_id: id, user_id: u.id, role: 'finance', status: 'active', joined_at: joined, created_at: now, updated_at: now })),
    ]);
    out.push({ id, owner, operators, finance });
  }
  return { staff, workspaces: out, fourEyes };
}

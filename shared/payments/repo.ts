/** SQL for payment links, gateways and stored callbacks. */
import type { Db } from '../db.js';
import type { GatewayStatus, PaymentMethod } from './gateways/types.js';

export type PaymentStatus = 'pending' | 'paid' | 'expired' | 'failed' | 'awaiting_confirmation';

export interface PaymentRow {
  id: string;
  escrow_id: string;
  buyer_id: string;
  provider: string;
  method: PaymentMethod;
  is_manual: boolean;
  gateway_order_id: string;
  escrow_amount: number;
  surcharge: number;
  amount: number;
  status: PaymentStatus;
  qr_string: string | null;
  qr_url: string | null;
  va_number: string | null;
  va_bank: string | null;
  redirect_url: string | null;
  deep_link_url: string | null;
  raw_response: string;
  expires_at: Date | null;
  paid_at: Date | null;
  claimed_at: Date | null;
  claim_reference: string | null;
  flag: string | null;
  decided_by: string | null;
  next_poll_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface GatewayRow {
  provider: string;
  display_name: string;
  supported_methods: string[];
  is_manual: boolean;
  enabled: boolean;
  in_maintenance: boolean;
  config: unknown;
  fee_percent: string;
  fee_fixed: number;
  sort_order: number;
}

export async function enabledGateways(trx: Db): Promise<GatewayRow[]> {
  return (await trx('payment_gateways').where({ enabled: true, in_maintenance: false }).orderBy([{ column: 'sort_order' }, { column: 'provider' }])) as GatewayRow[];
}

export type NewPayment = Pick<
  PaymentRow,
  'escrow_id' | 'buyer_id' | 'provider' | 'method' | 'is_manual' | 'gateway_order_id' | 'escrow_amount' | 'surcharge' | 'amount' | 'created_at' | 'updated_at'
> &
  Partial<Pick<PaymentRow, 'qr_string' | 'qr_url' | 'va_number' | 'va_bank' | 'redirect_url' | 'deep_link_url' | 'raw_response' | 'expires_at' | 'next_poll_at'>>;

export async function insertPayment(trx: Db, row: NewPayment): Promise<PaymentRow> {
  const [created] = (await trx('payments').insert(row).returning('*')) as PaymentRow[];
  if (!created) throw new Error('payments insert returned no row');
  return created;
}

export async function findById(trx: Db, id: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ id }).first()) as PaymentRow | undefined;
}

export async function findForUpdate(trx: Db, id: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ id }).forUpdate().first()) as PaymentRow | undefined;
}

export async function findByOrder(trx: Db, gatewayOrderId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ gateway_order_id: gatewayOrderId }).first()) as PaymentRow | undefined;
}

export async function findByOrderForUpdate(trx: Db, gatewayOrderId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ gateway_order_id: gatewayOrderId }).forUpdate().first()) as PaymentRow | undefined;
}

export async function latestForEscrow(trx: Db, escrowId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ escrow_id: escrowId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first()) as
    | PaymentRow
    | undefined;
}

/** Compare-and-set on the payment's status. */
export async function movePayment(trx: Db, id: string, from: readonly PaymentStatus[], changes: Partial<PaymentRow>): Promise<PaymentRow | undefined> {
  const [row] = (await trx('payments').where({ id }).whereIn('status', from).update(changes).returning('*')) as PaymentRow[];
  return row;
}

export async function duePolls(trx: Db, now: Date, limit: number): Promise<PaymentRow[]> {
  return (await trx('payments').where({ status: 'pending', is_manual: false }).where('next_poll_at', '<=', now).orderBy('next_poll_at').limit(limit)) as PaymentRow[];
}

export async function setNextPoll(trx: Db, id: string, at: Date): Promise<void> {
  await trx('payments').where({ id, status: 'pending' }).update({ next_poll_at: at });
}

export interface CallbackRow {
  id: number;
  provider: string;
  source: 'callback' | 'poll' | 'staff';
  gateway_order_id: string;
  status: GatewayStatus;
  amount: number | null;
  processed_at: Date | null;
  outcome: string | null;
}

/** Stores a delivery; a duplicate only counts one more delivery. Returns the row and whether it was new. */
export async function upsertCallback(
  trx: Db,
  row: Omit<CallbackRow, 'id' | 'processed_at' | 'outcome'> & { dedupe_key: string; raw_body: string; headers: string; received_at: Date },
): Promise<{ id: number; processed_at: Date | null; inserted: boolean }> {
  const result = await trx.raw<{ rows: { id: number; processed_at: Date | null; inserted: boolean }[] }>(
    `INSERT INTO payment_callbacks (provider, source, gateway_order_id, status, amount, dedupe_key, raw_body, headers, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)
     ON CONFLICT (dedupe_key) DO UPDATE SET deliveries = payment_callbacks.deliveries + 1
     RETURNING id, processed_at, (xmax = 0) AS inserted`,
    [row.provider, row.source, row.gateway_order_id, row.status, row.amount, row.dedupe_key, row.raw_body, row.headers, row.received_at],
  );
  return result.rows[0]!;
}

export async function callbackForUpdate(trx: Db, id: number): Promise<CallbackRow | undefined> {
  return (await trx('payment_callbacks')
    .select('id', 'provider', 'source', 'gateway_order_id', 'status', 'amount', 'processed_at', 'outcome')
    .where({ id })
    .forUpdate()
    .first()) as CallbackRow | undefined;
}

export async function markCallbackProcessed(trx: Db, id: number, outcome: string, at: Date): Promise<void> {
  await trx('payment_callbacks').where({ id }).update({ processed_at: at, outcome });
}

/** The payment the escrow's status shows: the one that paid it, else the newest link. */
export async function currentForEscrow(trx: Db, escrowId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments')
    .where({ escrow_id: escrowId })
    .orderByRaw("(status = 'paid' AND flag IS NULL) DESC, created_at DESC, id DESC")
    .first()) as PaymentRow | undefined;
}

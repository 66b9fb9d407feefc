/**
 * In-app notifications (consumer spec 2, 4.6, 6). Services call `notify` inside the
 * transaction that makes the change; the outbox carries ids only, and the notifications
 * worker builds the row from the state it reads (`createNotices`), so a rolled-back
 * change notifies no one and a re-run job inserts nothing twice.
 *
 * A transaction that makes many changes at once (the gateway-callbacks worker reconciles
 * payments in batches) runs inside `collectNotices`: its notices leave in one outbox row
 * (`notifications.create-batch`) instead of one each.
 */
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import { enqueue } from '../outbox.js';
import type { JobScalar } from '../queues.js';

export const NOTIFICATION_TYPES = [
  'escrow_joined',
  'escrow_invited',
  'payment_success',
  'escrow_paid',
  'escrow_sent',
  'escrow_received',
  'escrow_completed_buyer',
  'escrow_completed_seller',
  'escrow_cancelled',
  'escrow_expired',
  'escrow_refunded',
  'dispute_opened',
  'dispute_resolved',
  'dispute_message',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export interface NotificationRefs {
  escrow_id: string;
  dispute_id?: string;
  /** A ruling's outcome, fixed when the ruling is made (a later ruling must not rewrite this notice). */
  outcome?: 'release' | 'refund' | 'hold';
}

/** Notices waiting for the end of a `collectNotices` transaction, by transaction. */
const collecting = new WeakMap<object, NotificationJob[]>();
/** Notices per batch job (one outbox row each). */
export const NOTICE_BATCH_SIZE = 500;

export async function notify(trx: Db, userId: string, type: NotificationType, refs: NotificationRefs): Promise<void> {
  const notice: NotificationJob = {
    user_id: userId,
    type,
    escrow_id: refs.escrow_id,
    dispute_id: refs.dispute_id ?? null,
    outcome: refs.outcome ?? null,
  };
  const batch = collecting.get(trx);
  if (batch) batch.push(notice);
  else await enqueue(trx, 'notifications.create', { ...notice });
}

/**
 * Runs `fn` in `trx`, gathering the notices it makes; before returning, queues them in as
 * few outbox rows as possible, in the same transaction (so they leave only if it commits).
 */
export async function collectNotices<T>(trx: Knex.Transaction, fn: () => Promise<T>): Promise<T> {
  if (collecting.has(trx)) return fn();
  const batch: NotificationJob[] = [];
  collecting.set(trx, batch);
  try {
    const result = await fn();
    for (let i = 0; i < batch.length; i += NOTICE_BATCH_SIZE) {
      const notices: Record<string, JobScalar>[] = batch.slice(i, i + NOTICE_BATCH_SIZE).map((n) => ({ ...n }));
      await enqueue(trx, 'notifications.create-batch', { notices });
    }
    return result;
  } finally {
    collecting.delete(trx);
  }
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

const rupiah = (amount: number) => `Rp${amount.toLocaleString('id-ID')}`;

interface EscrowFacts {
  id: string;
  item_name: string;
  amount: number;
  status: string;
}

/** Title and display-ready HTML body; every interpolated value is escaped. */
function render(type: NotificationType, e: EscrowFacts, outcome: string | null): { title: string; body: string } {
  const item = `<strong>${escapeHtml(e.item_name)}</strong>`;
  const amount = escapeHtml(rupiah(e.amount));
  switch (type) {
    case 'escrow_joined':
      return { title: 'Pembeli bergabung', body: `Seorang pembeli membuat escrow untuk ${item} senilai ${amount}.` };
    case 'escrow_invited':
      return { title: 'Escrow baru', body: `Anda diajak ke escrow untuk ${item} senilai ${amount}.` };
    case 'payment_success':
      return { title: 'Pembayaran berhasil', body: `Pembayaran ${amount} untuk ${item} diterima dan ditahan di escrow.` };
    case 'escrow_paid':
      return { title: 'Escrow dibayar', body: `Pembeli telah membayar ${amount} untuk ${item}. Silakan kirim pesanan.` };
    case 'escrow_sent':
      return { title: 'Pesanan dikirim', body: `Penjual telah mengirim ${item}.` };
    case 'escrow_received':
      return { title: 'Pesanan diterima', body: `Pembeli mengonfirmasi penerimaan ${item}.` };
    case 'escrow_completed_buyer':
      return { title: 'Escrow selesai', body: `Escrow untuk ${item} selesai; dana ${amount} diteruskan ke penjual.` };
    case 'escrow_completed_seller':
      return { title: 'Dana dilepas', body: `Dana escrow untuk ${item} telah masuk ke saldo Anda.` };
    case 'escrow_cancelled':
      return { title: 'Escrow dibatalkan', body: `Escrow untuk ${item} dibatalkan.` };
    case 'escrow_expired':
      return { title: 'Escrow kedaluwarsa', body: `Escrow untuk ${item} kedaluwarsa karena belum dibayar.` };
    case 'escrow_refunded':
      return { title: 'Dana dikembalikan', body: `Dana ${amount} untuk ${item} dikembalikan ke saldo pembeli.` };
    case 'dispute_opened':
      return { title: 'Sengketa dibuka', body: `Sengketa dibuka untuk escrow ${item}.` };
    case 'dispute_resolved':
      return { title: 'Sengketa diputuskan', body: `Sengketa untuk ${item} diputuskan: <strong>${escapeHtml(outcome ?? '')}</strong>.` };
    case 'dispute_message':
      return { title: 'Pesan sengketa baru', body: `Ada pesan baru di sengketa untuk ${item}.` };
  }
}

export interface NotificationJob {
  user_id: string;
  type: NotificationType;
  escrow_id: string;
  dispute_id: string | null;
  outcome: string | null;
}

export function isNotificationType(value: unknown): value is NotificationType {
  return typeof value === 'string' && (NOTIFICATION_TYPES as readonly string[]).includes(value);
}

/** Reads a notice out of job data; undefined when malformed. */
export function noticeOf(data: Record<string, unknown>): NotificationJob | undefined {
  const { user_id, type, escrow_id, dispute_id, outcome } = data;
  if (typeof user_id !== 'string' || typeof escrow_id !== 'string' || !isNotificationType(type)) return undefined;
  return {
    user_id,
    type,
    escrow_id,
    dispute_id: typeof dispute_id === 'string' ? dispute_id : null,
    outcome: typeof outcome === 'string' ? outcome : null,
  };
}

/**
 * The worker's half: one row per (source key, user), built from the escrows as they are
 * now (two queries for any number of notices); a re-run inserts nothing. Returns how many
 * rows were new.
 */
export async function createNotices(entries: { sourceKey: string; notice: NotificationJob }[], trx: Db = db): Promise<number> {
  if (entries.length === 0) return 0;
  const escrowIds = [...new Set(entries.map((e) => e.notice.escrow_id))];
  const escrows = new Map(
    ((await trx('escrows').select('id', 'item_name', 'amount', 'status').whereIn('id', escrowIds)) as EscrowFacts[]).map((e) => [e.id, e]),
  );
  const now = clock.now();
  const rows = entries.flatMap(({ sourceKey, notice }) => {
    const escrow = escrows.get(notice.escrow_id);
    if (!escrow) return [];
    const { title, body } = render(notice.type, escrow, notice.outcome);
    const metadata: Record<string, unknown> = { escrow_id: escrow.id, amount: escrow.amount };
    if (notice.dispute_id) metadata.dispute_id = notice.dispute_id;
    if (notice.outcome) metadata.outcome = notice.outcome;
    return [{ user_id: notice.user_id, type: notice.type, title, body, metadata: JSON.stringify(metadata), source_key: sourceKey, created_at: now }];
  });
  if (rows.length === 0) return 0;
  const inserted = await trx('notifications').insert(rows).onConflict(['source_key', 'user_id']).ignore().returning('id');
  return inserted.length;
}

/** One notice from one job (`notifications.create`). */
export async function createFromJob(sourceKey: string, notice: NotificationJob, trx: Db = db): Promise<{ created: boolean }> {
  return { created: (await createNotices([{ sourceKey, notice }], trx)) > 0 };
}

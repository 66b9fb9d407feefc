/**
 * In-app notifications (consumer spec 2, 4.6, 6). Services call `notify` inside the
 * transaction that makes the change; the outbox carries ids only, and the notifications
 * worker builds the row from the state it reads (`createFromJob`), so a rolled-back
 * change notifies no one and a re-run job inserts nothing twice.
 */
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import { enqueue } from '../outbox.js';

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

export async function notify(trx: Db, userId: string, type: NotificationType, refs: NotificationRefs): Promise<void> {
  await enqueue(trx, 'notifications.create', {
    user_id: userId,
    type,
    escrow_id: refs.escrow_id,
    dispute_id: refs.dispute_id ?? null,
    outcome: refs.outcome ?? null,
  });
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

/** The worker's half: one row per (job, user); a re-run inserts nothing. */
export async function createFromJob(sourceKey: string, job: NotificationJob, trx: Db = db): Promise<{ created: boolean }> {
  const escrow = (await trx('escrows').select('id', 'item_name', 'amount', 'status').where({ id: job.escrow_id }).first()) as EscrowFacts | undefined;
  if (!escrow) return { created: false };
  const outcome = job.outcome;
  const { title, body } = render(job.type, escrow, outcome);
  const metadata: Record<string, unknown> = { escrow_id: escrow.id, amount: escrow.amount };
  if (job.dispute_id) metadata.dispute_id = job.dispute_id;
  if (outcome) metadata.outcome = outcome;
  const inserted = await trx('notifications')
    .insert({ user_id: job.user_id, type: job.type, title, body, metadata: JSON.stringify(metadata), source_key: sourceKey, created_at: clock.now() })
    .onConflict(['source_key', 'user_id'])
    .ignore()
    .returning('id');
  return { created: inserted.length > 0 };
}

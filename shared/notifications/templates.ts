/**
 * What a notice says: its Indonesian title and display-ready HTML body, built from the
 * subject's facts as the worker reads them (every interpolated value is escaped), the
 * types that also go out by e-mail, and the plain-text form of a body for that e-mail.
 */
import type { NotificationType } from './types.js';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

const rupiah = (amount: number) => `Rp${amount.toLocaleString('id-ID')}`;

export interface EscrowFacts {
  id: string;
  item_name: string;
  amount: number;
  status: string;
}

export interface WithdrawalFacts {
  id: string;
  amount: number;
  net_amount: number;
  method: string;
  admin_note: string | null;
}

export type Facts = { kind: 'escrow'; e: EscrowFacts } | { kind: 'withdrawal'; w: WithdrawalFacts };

export interface Rendered {
  title: string;
  body: string;
}

function renderWithdrawal(type: NotificationType, w: WithdrawalFacts): Rendered | undefined {
  const net = escapeHtml(rupiah(w.net_amount));
  if (type === 'withdrawal_paid') return { title: 'Penarikan dibayar', body: `Penarikan <strong>${net}</strong> via ${escapeHtml(w.method)} telah dikirim.` };
  if (type === 'withdrawal_rejected') {
    const amount = escapeHtml(rupiah(w.amount));
    const why = w.admin_note ? ` Alasan: ${escapeHtml(w.admin_note)}` : '';
    return { title: 'Penarikan ditolak', body: `Penarikan ${amount} ditolak dan dana dikembalikan ke saldo Anda.${why}` };
  }
  return undefined;
}

function renderEscrow(type: NotificationType, e: EscrowFacts, outcome: string | null): Rendered | undefined {
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
    case 'withdrawal_paid':
    case 'withdrawal_rejected':
      return undefined;
  }
}

/** Title and display-ready HTML body; undefined when the type does not fit the subject. */
export function render(type: NotificationType, facts: Facts, outcome: string | null): Rendered | undefined {
  return facts.kind === 'withdrawal' ? renderWithdrawal(type, facts.w) : renderEscrow(type, facts.e, outcome);
}

/** Notices that also go out by e-mail (when the user's preference allows). */
export const EMAIL_TYPES: ReadonlySet<NotificationType> = new Set<NotificationType>([
  'payment_success',
  'escrow_paid',
  'escrow_sent',
  'escrow_completed_buyer',
  'escrow_completed_seller',
  'dispute_opened',
  'dispute_resolved',
  'withdrawal_paid',
  'withdrawal_rejected',
]);

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
/** The plain-text form of a rendered body (for e-mail): tags dropped, entities decoded. */
export function htmlToText(html: string): string {
  return html.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m]!);
}

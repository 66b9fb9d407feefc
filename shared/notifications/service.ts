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
import { config } from '../config.js';
import { db, type Db } from '../db.js';
import { queueMail } from '../mail/service.js';
import { enqueue } from '../outbox.js';
import type { JobScalar } from '../queues.js';
import { redis as sharedRedis } from '../redis.js';
import { noticeSettings } from './settings.js';
import type { Redis } from 'ioredis';

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
  'withdrawal_paid',
  'withdrawal_rejected',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/**
 * What a notice is about: an escrow (and maybe its dispute) or a withdrawal. The worker
 * reads the subject's current facts by this id.
 */
export interface NotificationRefs {
  escrow_id?: string;
  withdrawal_id?: string;
  dispute_id?: string;
  /** A ruling's outcome, fixed when the ruling is made (a later ruling must not rewrite this notice). */
  outcome?: 'release' | 'refund' | 'hold';
}

/** Notices waiting for the end of a `collectNotices` transaction, by transaction. */
const collecting = new WeakMap<object, NotificationJob[]>();
/** Notices per batch job (one outbox row each). */
export const NOTICE_BATCH_SIZE = 500;

export async function notify(trx: Db, userId: string, type: NotificationType, refs: NotificationRefs): Promise<void> {
  if (!refs.escrow_id && !refs.withdrawal_id) throw new Error(`notify(${type}): an escrow_id or a withdrawal_id is required`);
  const notice: NotificationJob = {
    user_id: userId,
    type,
    escrow_id: refs.escrow_id ?? null,
    dispute_id: refs.dispute_id ?? null,
    outcome: refs.outcome ?? null,
  };
  // Escrow notices keep the job shape they always had; only a withdrawal's carries its id.
  if (refs.withdrawal_id) notice.withdrawal_id = refs.withdrawal_id;
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

interface WithdrawalFacts {
  id: string;
  amount: number;
  net_amount: number;
  method: string;
  admin_note: string | null;
}

type Facts = { kind: 'escrow'; e: EscrowFacts } | { kind: 'withdrawal'; w: WithdrawalFacts };

/** Title and display-ready HTML body; every interpolated value is escaped. */
function render(type: NotificationType, facts: Facts, outcome: string | null): { title: string; body: string } | undefined {
  if (facts.kind === 'withdrawal') {
    const w = facts.w;
    const net = escapeHtml(rupiah(w.net_amount));
    if (type === 'withdrawal_paid') return { title: 'Penarikan dibayar', body: `Penarikan <strong>${net}</strong> via ${escapeHtml(w.method)} telah dikirim.` };
    if (type === 'withdrawal_rejected') {
      const amount = escapeHtml(rupiah(w.amount));
      const why = w.admin_note ? ` Alasan: ${escapeHtml(w.admin_note)}` : '';
      return { title: 'Penarikan ditolak', body: `Penarikan ${amount} ditolak dan dana dikembalikan ke saldo Anda.${why}` };
    }
    return undefined;
  }
  const e = facts.e;
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

export interface NotificationJob {
  user_id: string;
  type: NotificationType;
  escrow_id: string | null;
  withdrawal_id?: string | null;
  dispute_id: string | null;
  outcome: string | null;
}

export function isNotificationType(value: unknown): value is NotificationType {
  return typeof value === 'string' && (NOTIFICATION_TYPES as readonly string[]).includes(value);
}

/** Reads a notice out of job data; undefined when malformed. */
export function noticeOf(data: Record<string, unknown>): NotificationJob | undefined {
  const { user_id, type, escrow_id, withdrawal_id, dispute_id, outcome } = data;
  if (typeof user_id !== 'string' || !isNotificationType(type)) return undefined;
  const escrowId = typeof escrow_id === 'string' ? escrow_id : null;
  const withdrawalId = typeof withdrawal_id === 'string' ? withdrawal_id : null;
  if (!escrowId && !withdrawalId) return undefined;
  return {
    user_id,
    type,
    escrow_id: escrowId,
    withdrawal_id: withdrawalId,
    dispute_id: typeof dispute_id === 'string' ? dispute_id : null,
    outcome: typeof outcome === 'string' ? outcome : null,
  };
}

// ---- Preferences -----------------------------------------------------------------------------

export interface Preference {
  in_app: boolean;
  email: boolean;
}

/** Every type with its channels (a type never set has both on). */
export async function preferencesOf(userId: string, trx: Db = db): Promise<Record<NotificationType, Preference>> {
  const rows = await trx('notification_preferences').where({ user_id: userId }).select<({ type: string } & Preference)[]>('type', 'in_app', 'email');
  const set = new Map(rows.map((r) => [r.type, r]));
  const out = {} as Record<NotificationType, Preference>;
  for (const type of NOTIFICATION_TYPES) {
    const r = set.get(type);
    out[type] = { in_app: r?.in_app ?? true, email: r?.email ?? true };
  }
  return out;
}

/** Changes the named types' channels (a channel left out keeps its value). */
export async function updatePreferences(userId: string, changes: Partial<Record<NotificationType, Partial<Preference>>>): Promise<Record<NotificationType, Preference>> {
  await db.transaction(async (trx) => {
    const current = await preferencesOf(userId, trx);
    const now = clock.now();
    const rows = Object.entries(changes).map(([type, change]) => {
      const base = current[type as NotificationType];
      return { user_id: userId, type, in_app: change?.in_app ?? base.in_app, email: change?.email ?? base.email, updated_at: now };
    });
    if (rows.length > 0) await trx('notification_preferences').insert(rows).onConflict(['user_id', 'type']).merge(['in_app', 'email', 'updated_at']);
  });
  return preferencesOf(userId);
}

// ---- Creating rows (the worker's half) ---------------------------------------------------------

export interface CreatedNotices {
  /** In-app rows that were new. */
  created: number;
  /** Users whose unread count changed (publish to them once committed). */
  users: string[];
  /** E-mails queued. */
  mailed: number;
}

/**
 * The worker's half: one row per (source key, user), built from the escrow or withdrawal as
 * it is now (a fixed number of queries for any number of notices); a re-run inserts nothing
 * and mails no one twice. A type switched off in-app still gets a row (hidden: `in_app`
 * false), so the e-mail is sent once. Returns what was new; the caller publishes the users
 * after the commit (`publishUnreadChanged`).
 */
export async function createNoticesIn(trx: Db, entries: { sourceKey: string; notice: NotificationJob }[]): Promise<CreatedNotices> {
  if (entries.length === 0) return { created: 0, users: [], mailed: 0 };
  const escrowIds = [...new Set(entries.flatMap((e) => (e.notice.escrow_id ? [e.notice.escrow_id] : [])))];
  const withdrawalIds = [...new Set(entries.flatMap((e) => (!e.notice.escrow_id && e.notice.withdrawal_id ? [e.notice.withdrawal_id] : [])))];
  const userIds = [...new Set(entries.map((e) => e.notice.user_id))];
  const escrows = new Map(
    escrowIds.length === 0
      ? []
      : ((await trx('escrows').select('id', 'item_name', 'amount', 'status').whereIn('id', escrowIds)) as EscrowFacts[]).map((e) => [e.id, e]),
  );
  const withdrawals = new Map(
    withdrawalIds.length === 0
      ? []
      : ((await trx('withdrawals').select('id', 'amount', 'net_amount', 'method', 'admin_note').whereIn('id', withdrawalIds)) as WithdrawalFacts[]).map((w) => [
          w.id,
          { ...w, amount: Number(w.amount), net_amount: Number(w.net_amount) },
        ]),
  );
  const prefs = new Map(
    (await trx('notification_preferences').whereIn('user_id', userIds).select<({ user_id: string; type: string } & Preference)[]>('user_id', 'type', 'in_app', 'email')).map((p) => [
      `${p.user_id}:${p.type}`,
      p,
    ]),
  );
  const now = clock.now();
  const rows = entries.flatMap(({ sourceKey, notice }) => {
    let facts: Facts | undefined;
    const metadata: Record<string, unknown> = {};
    if (notice.escrow_id) {
      const e = escrows.get(notice.escrow_id);
      if (e) {
        facts = { kind: 'escrow', e };
        Object.assign(metadata, { escrow_id: e.id, amount: e.amount });
      }
    } else if (notice.withdrawal_id) {
      const w = withdrawals.get(notice.withdrawal_id);
      if (w) {
        facts = { kind: 'withdrawal', w };
        Object.assign(metadata, { withdrawal_id: w.id, amount: w.amount, net_amount: w.net_amount });
      }
    }
    if (!facts) return [];
    const rendered = render(notice.type, facts, notice.outcome);
    if (!rendered) return [];
    if (notice.dispute_id) metadata.dispute_id = notice.dispute_id;
    if (notice.outcome) metadata.outcome = notice.outcome;
    const pref = prefs.get(`${notice.user_id}:${notice.type}`);
    return [
      {
        user_id: notice.user_id,
        type: notice.type,
        title: rendered.title,
        body: rendered.body,
        metadata: JSON.stringify(metadata),
        source_key: sourceKey,
        created_at: now,
        in_app: pref?.in_app ?? true,
      },
    ];
  });
  if (rows.length === 0) return { created: 0, users: [], mailed: 0 };
  type Inserted = { id: string; user_id: string; type: NotificationType; title: string; body: string; in_app: boolean };
  const inserted = await trx('notifications')
    .insert(rows)
    .onConflict(['source_key', 'user_id'])
    .ignore()
    .returning<Inserted[]>(['id', 'user_id', 'type', 'title', 'body', 'in_app']);
  const mails = inserted.filter((r) => noticeSettings.emails && EMAIL_TYPES.has(r.type) && (prefs.get(`${r.user_id}:${r.type}`)?.email ?? true));
  if (mails.length > 0) {
    const recipients = new Map(
      (await trx('users').whereIn('id', [...new Set(mails.map((m) => m.user_id))]).where({ status: 'active' }).select<{ id: string; email: string }[]>('id', 'email')).map((u) => [u.id, u.email]),
    );
    for (const m of mails) {
      const to = recipients.get(m.user_id);
      if (!to) continue;
      await queueMail(trx, { to, userId: m.user_id, template: `notification.${m.type}`, subject: m.title, text: `${htmlToText(m.body)}\n` });
    }
  }
  const shown = inserted.filter((r) => r.in_app);
  return { created: shown.length, users: [...new Set(shown.map((r) => r.user_id))], mailed: mails.length };
}

/** `createNoticesIn` in a transaction of its own, then the users' streams are told. Returns how many rows were new. */
export async function createNotices(entries: { sourceKey: string; notice: NotificationJob }[]): Promise<number> {
  const result = await db.transaction((trx) => createNoticesIn(trx, entries));
  await publishUnreadChanged(result.users);
  return result.created;
}

/** One notice from one job (`notifications.create`). */
export async function createFromJob(sourceKey: string, notice: NotificationJob): Promise<{ created: boolean }> {
  return { created: (await createNotices([{ sourceKey, notice }])) > 0 };
}

// ---- Cross-process change signal ---------------------------------------------------------------

/** The Redis channel on which a user id means "this user's unread count may have changed". */
export function unreadChannel(): string {
  return `${config.queuePrefix}:notifications:unread`;
}

/** Call only after the change is committed: every API copy's open streams of these users recount. */
export async function publishUnreadChanged(userIds: readonly string[], client: Redis = sharedRedis): Promise<void> {
  for (const id of new Set(userIds)) await client.publish(unreadChannel(), id);
}

// ---- Reading (the routes' half) ----------------------------------------------------------------

export interface NotificationRow {
  id: string;
  user_id: string;
  type: string;
  title: string;
  body: string;
  metadata: Record<string, unknown>;
  is_read: boolean;
  created_at: Date;
}

export async function unreadCount(userId: string, trx: Db = db): Promise<number> {
  const [row] = (await trx('notifications').where({ user_id: userId, is_read: false, in_app: true }).count<{ n: string }[]>('* as n')) as { n: string }[];
  return Number(row?.n ?? 0);
}

export async function listFor(userId: string, q: { unread_only: boolean; page: number; limit: number }): Promise<{ rows: NotificationRow[]; total: number }> {
  const base = () => {
    const b = db('notifications').where({ user_id: userId, in_app: true });
    if (q.unread_only) b.where({ is_read: false });
    return b;
  };
  const [rows, [count]] = await Promise.all([
    base()
      .select('id', 'user_id', 'type', 'title', 'body', 'metadata', 'is_read', 'created_at')
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
      .limit(q.limit)
      .offset((q.page - 1) * q.limit) as Promise<NotificationRow[]>,
    base().count<{ n: string }[]>('* as n') as Promise<{ n: string }[]>,
  ]);
  return { rows, total: Number(count?.n ?? 0) };
}

export function serializeNotification(n: NotificationRow, total: number) {
  return {
    id: n.id,
    user_id: n.user_id,
    type: n.type,
    title: n.title,
    body: n.body,
    metadata: n.metadata,
    is_read: n.is_read,
    created_at: n.created_at.toISOString(),
    total_count: String(total),
  };
}

/**
 * Marks the owner's notification read. `undefined`: no such notification (404); 'forbidden':
 * another user's (403, as for a stranger on an escrow; nothing of it is shown or changed).
 */
export async function markRead(userId: string, id: string): Promise<{ row: NotificationRow; changed: boolean } | 'forbidden' | undefined> {
  const now = clock.now();
  const [moved] = await db('notifications')
    .where({ id, user_id: userId, in_app: true, is_read: false })
    .update({ is_read: true, read_at: now })
    .returning<NotificationRow[]>(['id', 'user_id', 'type', 'title', 'body', 'metadata', 'is_read', 'created_at']);
  if (moved) return { row: moved, changed: true };
  const row = await db('notifications').where({ id, user_id: userId, in_app: true }).first<NotificationRow | undefined>('id', 'user_id', 'type', 'title', 'body', 'metadata', 'is_read', 'created_at');
  if (row) return { row, changed: false };
  const other = await db('notifications').where({ id }).whereNot({ user_id: userId }).first<{ id: string } | undefined>('id');
  return other ? 'forbidden' : undefined;
}

export async function markAllRead(userId: string): Promise<number> {
  return db('notifications').where({ user_id: userId, is_read: false }).update({ is_read: true, read_at: clock.now() });
}

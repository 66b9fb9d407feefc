/**
 * The notifications worker's half: rows built from the escrow or withdrawal as it is now,
 * one per (source key, user), and their e-mails.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import { queueMail } from '../mail/service.js';
import * as repo from './repo.js';
import { noticeSettings } from './settings.js';
import { EMAIL_TYPES, htmlToText, render, type EscrowFacts, type Facts, type WithdrawalFacts } from './templates.js';
import type { NotificationJob } from './types.js';

export interface CreatedNotices {
  /** In-app rows that were new. */
  created: number;
  /** Users whose unread count changed (publish to them once committed). */
  users: string[];
  /** E-mails queued. */
  mailed: number;
}

type Entry = { sourceKey: string; notice: NotificationJob };

/** What the notices of one batch are about, read in a fixed number of queries. */
interface Known {
  escrows: Map<string, EscrowFacts>;
  withdrawals: Map<string, WithdrawalFacts>;
  /** Preference rows by `<user id>:<type>` (a missing one has both channels on). */
  prefs: Map<string, repo.PreferenceRow>;
}

const distinct = (ids: (string | null | undefined)[]): string[] => [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];

async function readKnown(trx: Db, entries: Entry[]): Promise<Known> {
  const escrowIds = distinct(entries.map((e) => e.notice.escrow_id));
  const withdrawalIds = distinct(entries.map((e) => (e.notice.escrow_id ? null : e.notice.withdrawal_id)));
  const userIds = distinct(entries.map((e) => e.notice.user_id));
  // One after another: `trx` is one connection.
  const escrows = await repo.escrowFacts(trx, escrowIds);
  const withdrawals = await repo.withdrawalFacts(trx, withdrawalIds);
  const prefs = await repo.preferenceRows(trx, userIds);
  return {
    escrows: new Map(escrows.map((e) => [e.id, e])),
    withdrawals: new Map(withdrawals.map((w) => [w.id, w])),
    prefs: new Map(prefs.map((p) => [`${p.user_id}:${p.type}`, p])),
  };
}

/** The subject's facts and the metadata the row keeps of them; undefined when the subject is gone. */
function factsOf(notice: NotificationJob, known: Known): { facts: Facts; metadata: Record<string, unknown> } | undefined {
  if (notice.escrow_id) {
    const e = known.escrows.get(notice.escrow_id);
    return e && { facts: { kind: 'escrow', e }, metadata: { escrow_id: e.id, amount: e.amount } };
  }
  const w = notice.withdrawal_id ? known.withdrawals.get(notice.withdrawal_id) : undefined;
  return w && { facts: { kind: 'withdrawal', w }, metadata: { withdrawal_id: w.id, amount: w.amount, net_amount: w.net_amount } };
}

function rowOf({ sourceKey, notice }: Entry, known: Known, now: Date): repo.NewNotice | undefined {
  const subject = factsOf(notice, known);
  if (!subject) return undefined;
  const rendered = render(notice.type, subject.facts, notice.outcome);
  if (!rendered) return undefined;
  const metadata = subject.metadata;
  if (notice.dispute_id) metadata.dispute_id = notice.dispute_id;
  if (notice.outcome) metadata.outcome = notice.outcome;
  const pref = known.prefs.get(`${notice.user_id}:${notice.type}`);
  return {
    user_id: notice.user_id,
    type: notice.type,
    title: rendered.title,
    body: rendered.body,
    metadata: JSON.stringify(metadata),
    source_key: sourceKey,
    created_at: now,
    in_app: pref?.in_app ?? true,
  };
}

/** Queues the e-mail of each new row whose type goes out by e-mail and whose user allows it; returns how many. */
async function mailNew(trx: Db, inserted: repo.InsertedNotice[], known: Known): Promise<number> {
  const mails = inserted.filter((r) => noticeSettings.emails && EMAIL_TYPES.has(r.type) && (known.prefs.get(`${r.user_id}:${r.type}`)?.email ?? true));
  if (mails.length === 0) return 0;
  const recipients = await repo.activeEmails(trx, distinct(mails.map((m) => m.user_id)));
  for (const m of mails) {
    const to = recipients.get(m.user_id);
    if (!to) continue;
    await queueMail(trx, { to, userId: m.user_id, template: `notification.${m.type}`, subject: m.title, text: `${htmlToText(m.body)}\n` });
  }
  return mails.length;
}

/**
 * One row per (source key, user), built from the escrow or withdrawal as it is now (a
 * fixed number of queries for any number of notices); a re-run inserts nothing and mails
 * no one twice. A type switched off in-app still gets a row (hidden: `in_app` false), so
 * the e-mail is sent once. Returns what was new; the caller publishes the users after the
 * commit (`publishUnreadChanged`).
 */
export async function createNoticesIn(trx: Db, entries: Entry[]): Promise<CreatedNotices> {
  if (entries.length === 0) return { created: 0, users: [], mailed: 0 };
  const known = await readKnown(trx, entries);
  const now = clock.now();
  const rows = entries.flatMap((entry) => rowOf(entry, known, now) ?? []);
  if (rows.length === 0) return { created: 0, users: [], mailed: 0 };
  const inserted = await repo.insertNotices(trx, rows);
  const mailed = await mailNew(trx, inserted, known);
  const shown = inserted.filter((r) => r.in_app);
  return { created: shown.length, users: [...new Set(shown.map((r) => r.user_id))], mailed };
}

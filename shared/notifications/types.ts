/**
 * The words of the notifications feature: its types, what a notice refers to, the notice
 * a job carries (ids only) and the stored row. No imports: the job payload schemas
 * (shared/job-payloads.ts) read NOTIFICATION_TYPES from here.
 */
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

export function isNotificationType(value: unknown): value is NotificationType {
  return typeof value === 'string' && (NOTIFICATION_TYPES as readonly string[]).includes(value);
}

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

/** One notice as a job carries it (ids only; the worker builds the row from them). */
export type NotificationJob = {
  user_id: string;
  type: NotificationType;
  escrow_id: string | null;
  withdrawal_id?: string | null;
  dispute_id: string | null;
  outcome: string | null;
};

export interface Preference {
  in_app: boolean;
  email: boolean;
}

export type PreferenceChanges = Partial<Record<NotificationType, Partial<Preference>>>;

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

export interface ListQuery {
  unread_only: boolean;
  page: number;
  limit: number;
}

/** The upload rules every part shares: purposes, sizes, quotas, rates, targets and storage keys. */
import type { BoundKind } from './repo.js';
import type { Purpose } from './sanitise/index.js';

/** Every purpose the service functions and the upload worker take. */
export const PURPOSES: readonly Purpose[] = ['escrow', 'chat', 'kyc', 'kyb'];
export const isPurpose = (v: string): v is Purpose => (PURPOSES as readonly string[]).includes(v);
/**
 * The consumer's upload types: the only ones POST /v1/upload/:type takes (any other is 400
 * INVALID_TYPE) and GET /v1/upload/config lists. `kyb` is uploaded by the enterprise KYB route.
 */
export const CONSUMER_PURPOSES = ['escrow', 'chat', 'kyc'] as const satisfies readonly Purpose[];
export type ConsumerPurpose = (typeof CONSUMER_PURPOSES)[number];
export const isConsumerPurpose = (v: string): v is ConsumerPurpose => (CONSUMER_PURPOSES as readonly string[]).includes(v);

const MB = 1024 * 1024;
export const MAX_BYTES: Record<Purpose, number> = { escrow: 10 * MB, chat: 5 * MB, kyc: 10 * MB, kyb: 10 * MB };
/**
 * Uploads per user per window, per purpose and in total (every purpose counts toward
 * `total`). The enterprise spec only rate-limits KYB uploads; its quota is a safety cap.
 */
export const DAILY_QUOTA: Record<Purpose | 'total', number> = { escrow: 300, chat: 300, kyc: 30, kyb: 200, total: 400 };
/** The daily quota is counted over the last 24 hours (rolling window). */
export const QUOTA_WINDOW_MS = 24 * 3600_000;
/** Unbound uploads older than this are deleted (file and row) by `uploads.purge-unbound`. */
export const UNBOUND_TTL_MS = 24 * 3600_000;
/** Rate limit of POST /v1/upload/:type. */
export const RATE = { points: 40, durationSeconds: 600 };
/** Most uploads one target may hold. */
export const MAX_BOUND: Record<BoundKind, number> = { escrow: 10, chat: 5, dispute: 30, kyb: 30, deal_document: 1 };
/** Upload purposes each target accepts (a deal document: the consumer's document types, PDF or image; never identity or KYB files). */
export const ACCEPTS: Record<BoundKind, readonly Purpose[]> = { escrow: ['escrow'], dispute: ['escrow'], chat: ['chat'], kyb: ['kyb'], deal_document: ['escrow', 'chat'] };

export const SANITISE_JOB = 'uploads.sanitise';
export const quarantineKey = (id: string) => `quarantine/${id}`;
export const fileKey = (name: string) => `files/${name}`;

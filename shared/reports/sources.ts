/**
 * What the reports' CSV exports are built from (enterprise spec 4.8; decision 0020
 * "Reports"): the exact columns of 4.8 and the rows of the range, oldest first, read a page
 * at a time in the exports worker's snapshot (shared/enterprise/exports.ts builds them).
 *
 * - deals.csv: deals created in the range; status and amounts computed from the milestones
 *   as the deal answers compute them; the fee columns of 4.5 rule 7 (empty for a deal
 *   without a fee record; every deal of this service has one).
 * - disbursements.csv: payouts created in the range; `deal` is the deal's reference,
 *   `milestone` its title, `instruction` the payout instruction's label, `bank` its bank
 *   and `account` its number masked as answers mask it (`…1234`), never in full.
 */
import type { CsvRecord } from '../enterprise/csv.js';
import type { CsvSource } from '../enterprise/exports.js';
import { keyset } from '../enterprise/keyset.js';
import { maskAccountNumber } from '../payouts/instruction-serialize.js';
import * as repo from './repo.js';

const PAGE = 1_000;

const amount = (v: string | number | null): number => (v === null ? 0 : Number(v));

export const DEAL_COLUMNS = [
  'reference', 'title', 'counterparty', 'status', 'currency', 'total_amount', 'funded_amount', 'released_amount',
  'external_ref', 'created_at', 'updated_at', 'fee_rate_bp', 'platform_fee', 'fee_buyer_percent', 'buyer_fee', 'seller_fee',
] as const;

export const DISBURSEMENT_COLUMNS = [
  'id', 'created_at', 'deal', 'milestone', 'instruction', 'bank', 'account', 'amount', 'currency', 'status', 'settled_at', 'failure_reason',
] as const;

export function dealRecord(d: repo.DealExportRow): CsvRecord<(typeof DEAL_COLUMNS)[number]> {
  return {
    reference: d.reference,
    title: d.title,
    counterparty: d.counterparty,
    status: d.status,
    currency: d.currency,
    total_amount: amount(d.total_amount),
    funded_amount: amount(d.funded_amount),
    released_amount: amount(d.released_amount),
    external_ref: d.external_ref,
    created_at: d.created_at,
    updated_at: d.updated_at,
    fee_rate_bp: d.fee_rate_bp,
    platform_fee: d.platform_fee,
    fee_buyer_percent: d.fee_buyer_percent,
    buyer_fee: d.buyer_fee,
    seller_fee: d.seller_fee,
  };
}

export function disbursementRecord(p: repo.DisbursementExportRow): CsvRecord<(typeof DISBURSEMENT_COLUMNS)[number]> {
  return {
    id: p.id,
    created_at: p.created_at,
    deal: p.deal,
    milestone: p.milestone,
    instruction: p.instruction,
    bank: p.bank,
    account: maskAccountNumber(p.account_number_last4),
    amount: p.amount,
    currency: p.currency,
    status: p.status,
    settled_at: p.settled_at,
    failure_reason: p.failure_reason,
  };
}

export const DEALS_SOURCE: CsvSource<(typeof DEAL_COLUMNS)[number]> = {
  columns: DEAL_COLUMNS,
  async *rows(trx, workspaceId, range) {
    for await (const d of keyset(PAGE, (last: repo.DealExportRow | undefined) => repo.dealExportPage(trx, workspaceId, range, last, PAGE))) yield dealRecord(d);
  },
};

export const DISBURSEMENTS_SOURCE: CsvSource<(typeof DISBURSEMENT_COLUMNS)[number]> = {
  columns: DISBURSEMENT_COLUMNS,
  async *rows(trx, workspaceId, range) {
    for await (const p of keyset(PAGE, (last: repo.DisbursementExportRow | undefined) => repo.disbursementExportPage(trx, workspaceId, range, last, PAGE))) yield disbursementRecord(p);
  },
};

export const REPORT_SOURCES = { deals: DEALS_SOURCE, disbursements: DISBURSEMENTS_SOURCE };

/**
 * Opening an escrow (consumer spec 4.2, 5.5; decision D3): from a seller's signed link (the
 * caller is the buyer), or directly with a counterparty named by username. Every new
 * escrow gets its event, the counterparty's notice and its expiry timer, all written with
 * it in one statement (repo.insertWithEvent; a direct creation's held for the COMMIT,
 * repo.insertWithEventAtCommit).
 */
import { randomUUID } from 'node:crypto';
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import { inTransaction, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import { noticeJobs } from '../notifications/service.js';
import { outboxItem, type OutboxItem } from '../outbox.js';
import * as users from '../users/repo.js';
import { escrowErrors } from './errors.js';
import { checkLinkContent, checkLinkShape, paramsFromLink, sellerSecret, signatureMatches, type LinkParams } from './links.js';
import * as repo from './repo.js';
import type { EscrowRow } from './repo.js';
import { CATEGORIES, PAYMENT_WINDOW_HOURS, type Category } from './states.js';
import type { Party } from './transition.js';

export const MIN_AMOUNT = 10_000;
export const MAX_AMOUNT = 500_000_000;
const HOUR_MS = 3600_000;

export function parseAmount(value: unknown): number {
  const n = typeof value === 'string' && /^[0-9]{1,12}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < MIN_AMOUNT || n > MAX_AMOUNT) throw escrowErrors.invalidAmount(MIN_AMOUNT, MAX_AMOUNT);
  return n;
}

export interface FromLinkInput {
  link?: string;
  amount: unknown;
  seller?: string;
  item?: string;
  category?: string;
  desc?: string;
  expires?: string | number;
  ref?: string;
  v?: string | number;
  sig?: string;
  buyer?: string;
}

function flattenedParams(input: FromLinkInput): LinkParams {
  const params: LinkParams = {};
  for (const name of ['seller', 'item', 'category', 'desc', 'expires', 'ref', 'v', 'sig', 'buyer'] as const) {
    const value = input[name];
    if (value !== undefined && value !== null) params[name] = String(value);
  }
  return params;
}

function paymentDeadline(now: Date): Date {
  return new Date(now.getTime() + PAYMENT_WINDOW_HOURS * HOUR_MS);
}

async function activeUser(trx: Db, id: string) {
  const u = await users.findById(trx, id);
  return u && u.status === 'active' && u.role === 'user' ? u : undefined;
}

/** POST /api/escrows/from-link: the caller is the buyer; the link is the seller's signed offer. */
export async function createFromLink(trxOrDb: Db | undefined, buyerId: string, input: FromLinkInput): Promise<EscrowRow> {
  const params = input.link !== undefined ? paramsFromLink(input.link) : flattenedParams(input);
  const now = clock.now();
  const shape = checkLinkShape(params, now);
  const amount = parseAmount(input.amount);
  return inTransaction(trxOrDb, async (trx) => {
    const seller = await activeUser(trx, shape.sellerId);
    if (!seller) throw escrowErrors.sellerNotFound();
    const secret = await sellerSecret(trx, seller.id);
    if (!secret || !signatureMatches(secret, params)) throw escrowErrors.signatureMismatch();
    if (seller.id === buyerId) throw escrowErrors.ownLink();
    const content = checkLinkContent(params, buyerId);
    let e: EscrowRow;
    const id = randomUUID();
    const expiresAt = paymentDeadline(now);
    try {
      e = await repo.insertWithEvent(trx, {
        id,
        buyer_id: buyerId,
        seller_id: seller.id,
        created_by: buyerId,
        source: 'link',
        item_name: content.item,
        description: content.description,
        amount,
        category: content.category,
        partner_ref: shape.ref,
        partner_sig_version: shape.version,
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      }, createdEvent(buyerId, 'buyer', 'link'), createdJobs(trx, { id, buyerId, sellerId: seller.id, expiresAt }, 'buyer', 'escrow_joined'));
    } catch (err) {
      if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'escrows_seller_ref_unique') throw escrowErrors.duplicateRef(shape.ref);
      throw err;
    }
    return e;
  });
}

export interface DirectInput {
  /** The caller's side of the deal. */
  role: Party;
  counterparty_username: string;
  item_name: string;
  description?: string;
  amount: unknown;
  category?: string;
}

/** The counterparty's username as the creation looks it up (trimmed, lowercased). */
export function counterpartyUsername(input: Pick<DirectInput, 'counterparty_username'>): string {
  return input.counterparty_username.trim().toLowerCase();
}

/** POST /api/escrows: a buyer or a seller opens an escrow with a counterparty named by username. */
export async function createDirect(trxOrDb: Db | undefined, actor: Actor, input: DirectInput): Promise<EscrowRow> {
  const amount = parseAmount(input.amount);
  const category = input.category ?? 'goods';
  if (!(CATEGORIES as readonly string[]).includes(category)) throw escrowErrors.invalidCategory();
  const item = input.item_name.trim();
  if (item.length === 0 || item.length > 200) throw escrowErrors.invalidItemName();
  return inTransaction(trxOrDb, async (trx) => {
    const username = counterpartyUsername(input);
    const other = await repo.userByUsername(trx, username);
    if (!other || other.status !== 'active' || other.role !== 'user') throw escrowErrors.counterpartyNotFound(username);
    if (other.id === actor.userId) throw escrowErrors.sameAccount();
    const now = clock.now();
    const [buyerId, sellerId] = input.role === 'buyer' ? [actor.userId, other.id] : [other.id, actor.userId];
    const id = randomUUID();
    const expiresAt = paymentDeadline(now);
    // Held for the COMMIT (in a keyed request, sent with the stored answer): nothing in a
    // direct creation's row can fail but a fault.
    const e = await repo.insertWithEventAtCommit(
      trx,
      {
        id,
        buyer_id: buyerId,
        seller_id: sellerId,
        created_by: actor.userId,
        source: 'direct',
        item_name: item,
        description: input.description ?? '',
        amount,
        category: category as Category,
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      },
      createdEvent(actor.userId, input.role, 'direct'),
      createdJobs(trx, { id, buyerId, sellerId, expiresAt }, input.role, 'escrow_invited'),
    );
    return e;
  });
}

/** Every new escrow's first event, written with it (repo.insertWithEvent). */
const createdEvent = (actorId: string, actorRole: Party, source: EscrowRow['source']) => ({ event: 'escrow.created' as const, actorId, actorRole, data: { source } });

/** What every new escrow gets besides its event, written with it: the counterparty's notice and its expiry timer. */
function createdJobs(trx: Db, e: { id: string; buyerId: string; sellerId: string; expiresAt: Date }, actorRole: Party, notice: 'escrow_joined' | 'escrow_invited'): OutboxItem[] {
  return [
    ...noticeJobs(trx, [{ userId: actorRole === 'buyer' ? e.sellerId : e.buyerId, type: notice, refs: { escrow_id: e.id } }]),
    outboxItem('escrows.expire', { escrow_id: e.id }, { runAt: e.expiresAt }),
  ];
}

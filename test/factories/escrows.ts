/**
 * Escrow factories: real services, real database. `createEscrow` makes a direct escrow
 * between two new (or given) users and walks it to the wanted status through the same
 * service calls the routes use, so the ledger holds at every step.
 */
import { createHmac } from 'node:crypto';
import { db } from '../../shared/db.js';
import * as escrows from '../../shared/escrows/service.js';
import type { EscrowRow } from '../../shared/escrows/repo.js';
import type { Category, EscrowStatus } from '../../shared/escrows/states.js';
import { openDispute } from '../../shared/disputes/service.js';
import type { UserRow } from '../../shared/users/repo.js';
import { createUser } from './users.js';

export interface EscrowOptions {
  buyer?: UserRow;
  seller?: UserRow;
  amount?: number;
  category?: Category;
  item?: string;
  /** The status to walk to (default pending_payment). `disputed` opens a dispute from `paid`. */
  status?: EscrowStatus;
}

export interface MadeEscrow {
  escrow: EscrowRow;
  buyer: UserRow;
  seller: UserRow;
}

const PATH: Record<EscrowStatus, EscrowStatus[]> = {
  pending_payment: [],
  paid: ['paid'],
  sent: ['paid', 'sent'],
  received: ['paid', 'sent', 'received'],
  released: ['paid', 'sent', 'received', 'released'],
  disputed: ['paid', 'disputed'],
  refunded: ['paid', 'disputed', 'refunded'],
  cancelled: ['cancelled'],
};

export async function createEscrow(options: EscrowOptions = {}): Promise<MadeEscrow> {
  const buyer = options.buyer ?? (await createUser()).user;
  const seller = options.seller ?? (await createUser()).user;
  const asBuyer: escrows.Actor = { userId: buyer.id, role: 'user' };
  let escrow = await escrows.createDirect(undefined, asBuyer, {
    role: 'buyer',
    counterparty_username: seller.username,
    item_name: options.item ?? 'Sepatu lari',
    amount: options.amount ?? 150_000,
    category: options.category ?? 'goods',
  });
  const asSeller: escrows.Actor = { userId: seller.id, role: 'user' };
  for (const step of PATH[options.status ?? 'pending_payment']) {
    if (step === 'paid') escrow = await escrows.markPaid(undefined, escrow.id, { reference: `test-${escrow.id}` });
    else if (step === 'sent') escrow = await escrows.send(undefined, asSeller, escrow.id, {});
    else if (step === 'received') escrow = await escrows.confirmReceived(undefined, asBuyer, escrow.id);
    else if (step === 'released') escrow = await escrows.release(undefined, asBuyer, escrow.id);
    else if (step === 'cancelled') escrow = await escrows.cancel(undefined, asBuyer, escrow.id);
    else if (step === 'disputed') {
      await openDispute(asBuyer, escrow.id, { reason_category: 'other', description: 'test dispute' });
      escrow = (await db('escrows').where({ id: escrow.id }).first()) as EscrowRow;
    } else if (step === 'refunded') {
      const { resolveDispute } = await import('../../shared/disputes/service.js');
      const admin = (await createUser({ role: 'admin' })).user;
      const d = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
      await resolveDispute(undefined, { actorId: admin.id, ip: '127.0.0.1' }, d.id, { outcome: 'refund' });
      escrow = (await db('escrows').where({ id: escrow.id }).first()) as EscrowRow;
    }
  }
  return { escrow, buyer, seller };
}

/**
 * Signs partner link fields the way decision D3 describes, written here independently of
 * shared/escrows/links.ts: present signed fields sorted by name, `name=encodeURIComponent(value)`
 * joined by `&`, HMAC-SHA256 hex with the seller's secret.
 */
export function signFields(secret: string, fields: Record<string, string>): string {
  const signed = ['buyer', 'category', 'desc', 'expires', 'item', 'ref', 'seller', 'v'];
  const canonical = Object.keys(fields)
    .filter((k) => signed.includes(k))
    .sort()
    .map((k) => `${k}=${encodeURIComponent(fields[k]!)}`)
    .join('&');
  return createHmac('sha256', secret).update(canonical).digest('hex');
}

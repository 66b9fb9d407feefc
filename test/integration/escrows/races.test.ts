/**
 * Concurrency of the escrow lifecycle (ARCHITECTURE rule 3: every move is a compare-and-set).
 * Each race fires real concurrent HTTP requests (each with its own API key) or concurrent
 * service calls, is repeated ROUNDS times, and checks after every round that exactly one
 * side won, the money moved once, and the ledger holds.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Job } from 'bullmq';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { issueKey, signInRaw, type SignedIn } from '../../helpers/auth-signin-util.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { commitTransaction, db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import * as escrows from '../../../shared/escrows/service.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import { openDispute, resolveDispute } from '../../../shared/disputes/service.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import type { JobData } from '../../../shared/queues.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { buildRegistry } from '../../../workers/registry.js';

const ROUNDS = 10;
const SECOND = 1000;
const DAY = 24 * 3600 * SECOND;
const AMOUNT = 150_000;
const FEE = 2000;

type Settled<T> = { ok: true; value: T } | { ok: false; err: unknown };

function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (err: unknown) => ({ ok: false as const, err }),
  );
}

/**
 * Starts two operations at once, `b` first when `bFirst` (rounds alternate, so neither side
 * always has the head start), and waits for both.
 */
function both<A, B>(a: () => PromiseLike<A>, b: () => PromiseLike<B>, bFirst: boolean): Promise<[A, B]> {
  if (bFirst) {
    const pb = Promise.resolve(b());
    const pa = Promise.resolve(a());
    return Promise.all([pa, pb]);
  }
  const pa = Promise.resolve(a());
  const pb = Promise.resolve(b());
  return Promise.all([pa, pb]);
}

function appErrorOf(s: Settled<unknown>): AppError {
  if (s.ok) throw new Error('expected a rejection');
  if (!(s.err instanceof AppError)) throw s.err instanceof Error ? s.err : new Error(String(s.err));
  return s.err;
}

async function escrowRow(id: string): Promise<EscrowRow> {
  const e = (await db('escrows').where({ id }).first()) as EscrowRow | undefined;
  if (!e) throw new Error(`escrow ${id} is missing`);
  return e;
}

async function userBalance(userId: string): Promise<number> {
  return ((await db('users').select('balance').where({ id: userId }).first()) as { balance: number }).balance;
}

async function entries(escrowId: string, kind: string): Promise<number> {
  const [row] = await db('journal_entries').where({ kind, ref_type: 'escrow', ref_id: escrowId }).count<{ n: number }[]>('* as n');
  return Number(row!.n);
}

/** Running totals of what the races should have moved, checked after every round. */
class Books {
  seller = 0;
  buyer = 0;
  platform = 0;
  constructor(
    private readonly buyerUser: UserRow,
    private readonly sellerUser: UserRow,
  ) {}

  released(amount: number, fee: number): void {
    this.seller += amount - fee;
    this.platform += fee;
  }

  refunded(amount: number): void {
    this.buyer += amount;
  }

  async check(): Promise<void> {
    expect(await userBalance(this.sellerUser.id), 'seller balance').to.equal(this.seller);
    expect(await userBalance(this.buyerUser.id), 'buyer balance').to.equal(this.buyer);
    expect(await balanceOf(db, { system: 'platformFees' }), 'platform fees').to.equal(this.platform);
    expect(await checkLedger(db)).to.deep.equal([]);
  }
}

interface Outcome {
  status: number;
  code?: string;
  state?: unknown;
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const session = (s: SignedIn) => ({ Cookie: s.cookie, 'X-CSRF-Token': s.csrf });
const registry = buildRegistry();

describe('escrow races', function () {
  this.timeout(120_000);
  let buyer: UserRow;
  let seller: UserRow;
  let books: Books;
  /**
   * Credentials per concurrent request: the party's API key (one live key per user), then
   * its own signed-in sessions (cookie + CSRF token) for further requests of the same user.
   */
  let buyerAuth: Record<string, string>[];
  let sellerAuth: Record<string, string>[];

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    const b = await createUser();
    const s = await createUser();
    buyer = b.user;
    seller = s.user;
    books = new Books(buyer, seller);
    const client = api();
    buyerAuth = [bearer(await issueKey(buyer.id))];
    for (let i = 0; i < 4; i += 1) buyerAuth.push(session(await signInRaw(client, buyer.email, b.password)));
    sellerAuth = [bearer(await issueKey(seller.id))];
  });

  it('release vs dispute on a received escrow: exactly one wins (HTTP and service calls)', async () => {
    const client = api();
    const wins = { release: 0, dispute: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: 'received', buyer, seller, amount: AMOUNT });
      let releaseWon: boolean;
      let releaseLoss: { code: string; status: unknown } | undefined;
      let disputeLoss: { code: string } | undefined;
      if (round % 2 === 0) {
        const [rel, dis] = await both(
          () => client.post(`/api/escrows/${escrow.id}/release`).set(buyerAuth[0]!).send({}),
          () => client.post(`/v1/escrows/${escrow.id}/dispute`).set(sellerAuth[0]!).send({ reason_category: 'other', description: `race ${round}` }),
          round % 4 === 2,
        );
        expect(`${rel.status}/${dis.status}`, `${rel.text} ${dis.text}`).to.be.oneOf(['200/409', '409/201']);
        releaseWon = rel.status === 200;
        if (!releaseWon) releaseLoss = { code: rel.body.error.code as string, status: rel.body.error.status };
        else disputeLoss = { code: dis.body.error.code as string };
      } else {
        const [rel, dis] = await both(
          () => settle(escrows.release(undefined, { userId: buyer.id, role: 'user' }, escrow.id)),
          () => settle(openDispute({ userId: seller.id, role: 'user' }, escrow.id, { reason_category: 'other', description: `race ${round}` })),
          round % 4 === 3,
        );
        expect(rel.ok !== dis.ok, 'exactly one of release and dispute succeeds').to.equal(true);
        releaseWon = rel.ok;
        if (!releaseWon) {
          const err = appErrorOf(rel);
          expect(err.status).to.equal(409);
          releaseLoss = { code: err.code, status: err.extras.status };
        } else {
          const err = appErrorOf(dis);
          expect(err.status).to.equal(409);
          disputeLoss = { code: err.code };
        }
      }
      const e = await escrowRow(escrow.id);
      const disputes = await db('disputes').where({ escrow_id: escrow.id });
      if (releaseWon) {
        wins.release += 1;
        expect(disputeLoss!.code).to.be.oneOf(['NOT_DISPUTABLE', 'ESCROW_MOVED']);
        expect(e.status).to.equal('released');
        expect(disputes).to.have.length(0);
        expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(0);
        expect(await entries(escrow.id, 'escrow_release')).to.equal(1);
        books.released(AMOUNT, FEE);
      } else {
        wins.dispute += 1;
        expect(releaseLoss).to.deep.equal({ code: 'INVALID_STATE', status: 'disputed' });
        expect(e.status).to.equal('disputed');
        expect(disputes).to.have.length(1);
        expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(AMOUNT);
        expect(await entries(escrow.id, 'escrow_release')).to.equal(0);
      }
      await books.check();
    }
    expect(wins.release + wins.dispute).to.equal(ROUNDS);
  });

  it('cancel vs markPaid on a pending escrow: exactly one wins; a lost payment moves no money', async () => {
    const client = api();
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ buyer, seller, amount: AMOUNT });
      const clearingBefore = await balanceOf(db, { system: 'gatewayClearing' });
      // The canceller alternates between the buyer and the seller.
      const who = round % 2 === 0 ? buyerAuth[0]! : sellerAuth[0]!;
      const canceller = round % 2 === 0 ? buyer : seller;
      // Rounds 0-1 of every 4 cancel over HTTP, rounds 2-3 through the service; the head start alternates.
      const cancelNow = async (): Promise<Outcome> => {
        if (round % 4 < 2) {
          const res = await client.post(`/api/escrows/${escrow.id}/cancel`).set(who).send({ reason: 'changed my mind' });
          return res.status === 200 ? { status: 200 } : { status: res.status, code: res.body.error.code as string, state: res.body.error.status };
        }
        const r = await settle(escrows.cancel(undefined, { userId: canceller.id, role: 'user' }, escrow.id, { reason: 'changed my mind' }));
        if (r.ok) return { status: 200 };
        const err = appErrorOf(r);
        return { status: err.status, code: err.code, state: err.extras.status };
      };
      const [cancel, paid] = await both(cancelNow, () => settle(escrows.markPaid(undefined, escrow.id, { reference: `race-${round}` })), round % 2 === 1);
      const e = await escrowRow(escrow.id);
      if (cancel.status === 200) {
        const err = appErrorOf(paid);
        expect(err.status).to.equal(409);
        expect(err.code).to.equal('INVALID_STATE');
        expect(err.extras.status).to.equal('cancelled');
        expect(e.status).to.equal('cancelled');
        expect(e.cancel_reason).to.equal(round % 2 === 0 ? 'buyer_cancelled' : 'seller_cancelled');
        expect(e.paid_at).to.equal(null);
        expect(await entries(escrow.id, 'escrow_payment')).to.equal(0);
        expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(0);
        expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(clearingBefore);
      } else {
        expect(cancel).to.deep.equal({ status: 409, code: 'INVALID_STATE', state: 'paid' });
        expect(paid.ok).to.equal(true);
        expect(e.status).to.equal('paid');
        expect(e.cancelled_at).to.equal(null);
        expect(await entries(escrow.id, 'escrow_payment')).to.equal(1);
        expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(AMOUNT);
        expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(clearingBefore - AMOUNT);
      }
      await books.check();
    }
  });

  it('two releases at once: one 200, one 409; the seller is credited once', async () => {
    const client = api();
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: 'received', buyer, seller, amount: AMOUNT });
      const answers = await Promise.all(
        [buyerAuth[0]!, buyerAuth[1]!].map((k) => client.post(`/api/escrows/${escrow.id}/release`).set(k).send({})),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses, answers.map((r) => r.text).join(' ')).to.deep.equal([200, 409]);
      const lost = answers.find((r) => r.status === 409)!;
      expect(lost.body.error.code).to.equal('INVALID_STATE');
      expect(lost.body.error.status).to.equal('released');
      expect((await escrowRow(escrow.id)).status).to.equal('released');
      expect(await entries(escrow.id, 'escrow_release')).to.equal(1);
      expect(await db('escrow_events').where({ escrow_id: escrow.id, event: 'escrow.released' })).to.have.length(1);
      books.released(AMOUNT, FEE);
      await books.check();
    }
  });

  it('two releases with the same Idempotency-Key at once: one runs, the other is in flight or a replay; credited once', async () => {
    const client = api();
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: 'received', buyer, seller, amount: AMOUNT });
      const idem = randomUUID();
      const answers: Response[] = await Promise.all(
        [buyerAuth[0]!, buyerAuth[1]!].map((k) => client.post(`/api/escrows/${escrow.id}/release`).set(k).set('Idempotency-Key', idem).send({})),
      );
      const fresh = answers.filter((r) => r.status === 200 && r.headers['idempotent-replay'] === undefined);
      const others = answers.filter((r) => !fresh.includes(r));
      expect(fresh, answers.map((r) => `${r.status} ${r.text}`).join(' ')).to.have.length(1);
      expect(others).to.have.length(1);
      const other = others[0]!;
      if (other.status === 200) {
        expect(other.headers['idempotent-replay']).to.equal('true');
        expect(other.body).to.deep.equal(fresh[0]!.body);
      } else {
        expect(other.status).to.equal(409);
        expect(other.body.error.code).to.equal('IDEMPOTENCY_KEY_IN_FLIGHT');
      }
      expect(fresh[0]!.body.data.status).to.equal('released');
      // A retry after both answered is a replay of the first.
      const retry = await client.post(`/api/escrows/${escrow.id}/release`).set(buyerAuth[2]!).set('Idempotency-Key', idem).send({});
      expect(retry.status).to.equal(200);
      expect(retry.headers['idempotent-replay']).to.equal('true');
      expect(retry.body).to.deep.equal(fresh[0]!.body);
      expect(await entries(escrow.id, 'escrow_release')).to.equal(1);
      books.released(AMOUNT, FEE);
      await books.check();
    }
  });

  it('five extends at once on a goods escrow: three 200s (14d -> 21 -> 28 -> 30), two EXTEND_LIMIT_REACHED', async () => {
    const client = api();
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: round % 2 === 0 ? 'sent' : 'received', buyer, seller, amount: AMOUNT });
      const sentAt = escrow.sent_at!.getTime();
      const answers = await Promise.all(buyerAuth.map((k) => client.post(`/api/escrows/${escrow.id}/extend`).set(k).send({})));
      const oks = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status !== 200);
      expect(oks, answers.map((r) => `${r.status} ${r.text}`).join(' ')).to.have.length(3);
      for (const r of refused) {
        expect(r.status).to.equal(409);
        expect(r.body.error.code).to.equal('EXTEND_LIMIT_REACHED');
      }
      // Each winner saw its own step: counts 1, 2, 3 with their deadlines.
      const seen = oks.map((r) => [r.body.data.extension_count as number, r.body.data.auto_release_at as string]).sort((a, b) => Number(a[0]) - Number(b[0]));
      expect(seen).to.deep.equal([
        [1, new Date(sentAt + 21 * DAY).toISOString()],
        [2, new Date(sentAt + 28 * DAY).toISOString()],
        [3, new Date(sentAt + 30 * DAY).toISOString()],
      ]);
      const e = await escrowRow(escrow.id);
      expect(e.extension_count).to.equal(oks.length);
      expect(e.auto_release_at!.toISOString()).to.equal(new Date(sentAt + 30 * DAY).toISOString());
      expect(await db('escrow_events').where({ escrow_id: escrow.id, event: 'escrow.extended' })).to.have.length(oks.length);
    }
  });

  it('two extends at once on a service escrow: extension_count grows by the number of 200s', async () => {
    const client = api();
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: 'sent', category: 'service', buyer, seller, amount: AMOUNT });
      const sentAt = escrow.sent_at!.getTime();
      const answers = await Promise.all([buyerAuth[0]!, buyerAuth[1]!].map((k) => client.post(`/api/escrows/${escrow.id}/extend`).set(k).send({})));
      expect(answers.map((r) => r.status), answers.map((r) => r.text).join(' ')).to.deep.equal([200, 200]);
      const e = await escrowRow(escrow.id);
      expect(e.extension_count).to.equal(2);
      expect(e.auto_release_at!.toISOString()).to.equal(new Date(sentAt + 9 * DAY).toISOString());
      expect(answers.map((r) => r.body.data.extension_count as number).sort()).to.deep.equal([1, 2]);
    }
  });

  it('two staff rulings (release vs refund) at once: one wins, the money moves once', async () => {
    const admins = [(await createUser({ role: 'admin' })).user, (await createUser({ role: 'admin' })).user];
    const wins = { release: 0, refund: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: 'disputed', buyer, seller, amount: AMOUNT });
      const dispute = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
      const [rel, ref] = await both(
        () => settle(resolveDispute(undefined, { actorId: admins[0]!.id, ip: '127.0.0.1' }, dispute.id, { outcome: 'release', note: 'seller shipped' })),
        () => settle(resolveDispute(undefined, { actorId: admins[1]!.id, ip: '127.0.0.1' }, dispute.id, { outcome: 'refund', note: 'never arrived' })),
        round % 2 === 1,
      );
      expect(rel.ok !== ref.ok, 'exactly one ruling succeeds').to.equal(true);
      const loser = appErrorOf(rel.ok ? ref : rel);
      expect(loser.status).to.equal(409);
      expect(loser.code).to.equal('INVALID_STATE');
      expect(loser.extras.status).to.equal('resolved');
      const e = await escrowRow(escrow.id);
      const d = (await db('disputes').where({ id: dispute.id }).first()) as { status: string; outcome: string; resolved_by: string };
      expect(d.status).to.equal('resolved');
      if (rel.ok) {
        wins.release += 1;
        expect(loser.extras.outcome).to.equal('release');
        expect(e.status).to.equal('released');
        expect(d).to.include({ outcome: 'release', resolved_by: admins[0]!.id });
        expect(await entries(escrow.id, 'escrow_release')).to.equal(1);
        expect(await entries(escrow.id, 'escrow_refund')).to.equal(0);
        books.released(AMOUNT, FEE);
      } else {
        wins.refund += 1;
        expect(loser.extras.outcome).to.equal('refund');
        expect(e.status).to.equal('refunded');
        expect(d).to.include({ outcome: 'refund', resolved_by: admins[1]!.id });
        expect(await entries(escrow.id, 'escrow_refund')).to.equal(1);
        expect(await entries(escrow.id, 'escrow_release')).to.equal(0);
        books.refunded(AMOUNT);
      }
      expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(0);
      expect(await db('escrow_events').where({ escrow_id: escrow.id, event: 'dispute.resolved' })).to.have.length(1);
      await books.check();
    }
    expect(wins.release + wins.refund).to.equal(ROUNDS);
  });

  it('the auto-release timer vs an extend after the due time: the release always happens once and the extend is refused', async () => {
    const client = api();
    const autoRelease = registry.get('escrows.auto-release')!;
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: 'sent', buyer, seller, amount: AMOUNT });
      const due = escrow.auto_release_at!.getTime();
      clock.set(due + SECOND);
      const job = { id: undefined, name: 'escrows.auto-release', data: { escrow_id: escrow.id } } as unknown as Job<JobData>;
      // Even rounds extend over HTTP, odd rounds through the service; the head start alternates every two rounds.
      const extendNow = async (): Promise<Outcome & { count?: number }> => {
        if (round % 2 === 0) {
          const res = await client.post(`/api/escrows/${escrow.id}/extend`).set(buyerAuth[0]!).send({});
          return res.status === 200 ? { status: 200, count: res.body.data.extension_count as number } : { status: res.status, code: res.body.error.code as string, state: res.body.error.status };
        }
        const r = await settle(escrows.extend(undefined, { userId: buyer.id, role: 'user' }, escrow.id));
        if (r.ok) return { status: 200, count: r.value.extension_count };
        const err = appErrorOf(r);
        return { status: err.status, code: err.code, state: err.extras.status };
      };
      const [timer, ext] = await both(() => settle(autoRelease(job)), extendNow, round % 4 >= 2);
      expect(timer.ok, timer.ok ? '' : String(timer.err)).to.equal(true);
      expect((timer as { value: { released: boolean } }).value.released).to.equal(true);
      // Refused whichever ran first: the release time has passed (state sent) or the escrow is released.
      expect(ext.status).to.equal(409);
      expect((ext as { code: string }).code).to.equal('INVALID_STATE');
      expect(['sent', 'released']).to.include((ext as { state: string }).state);
      const e = await escrowRow(escrow.id);
      expect(e.status).to.equal('released');
      expect(e.extension_count).to.equal(0);
      expect(await entries(escrow.id, 'escrow_release')).to.equal(1);
      books.released(AMOUNT, FEE);
      await books.check();
    }
  });

  it('the auto-release timer vs a dispute at the due moment: exactly one wins', async () => {
    const client = api();
    const autoRelease = registry.get('escrows.auto-release')!;
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: round % 2 === 0 ? 'sent' : 'received', buyer, seller, amount: AMOUNT });
      clock.set(escrow.auto_release_at!.getTime() + SECOND);
      const job = { id: undefined, name: 'escrows.auto-release', data: { escrow_id: escrow.id } } as unknown as Job<JobData>;
      const disputeNow = async (): Promise<Outcome> => {
        if (round % 2 === 0) {
          const res = await client.post(`/v1/escrows/${escrow.id}/dispute`).set(buyerAuth[0]!).send({ reason_category: 'item_not_as_described', description: `race ${round}` });
          return res.status === 201 ? { status: 201 } : { status: res.status, code: res.body.error.code as string };
        }
        const r = await settle(openDispute({ userId: buyer.id, role: 'user' }, escrow.id, { reason_category: 'item_not_as_described', description: `race ${round}` }));
        if (r.ok) return { status: 201 };
        const err = appErrorOf(r);
        return { status: err.status, code: err.code };
      };
      const [timer, dis] = await both(() => settle(autoRelease(job)), disputeNow, round % 4 >= 2);
      expect(timer.ok, timer.ok ? '' : String(timer.err)).to.equal(true);
      const e = await escrowRow(escrow.id);
      if (timer.ok && (timer.value as { released: boolean }).released) {
        expect(dis.status).to.equal(409);
        expect(dis.code).to.be.oneOf(['NOT_DISPUTABLE', 'ESCROW_MOVED']);
        expect(e.status).to.equal('released');
        expect(await db('disputes').where({ escrow_id: escrow.id })).to.have.length(0);
        books.released(AMOUNT, FEE);
      } else {
        expect(dis).to.deep.equal({ status: 201 });
        expect(e.status).to.equal('disputed');
        expect(await entries(escrow.id, 'escrow_release')).to.equal(0);
        expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(AMOUNT);
      }
      await books.check();
    }
  });

  it('the auto-release timer vs the buyer releasing at once: released once, by whichever won', async () => {
    const client = api();
    const autoRelease = registry.get('escrows.auto-release')!;
    for (let round = 0; round < ROUNDS; round += 1) {
      const { escrow } = await createEscrow({ status: 'received', buyer, seller, amount: AMOUNT });
      clock.set(escrow.auto_release_at!.getTime() + SECOND);
      const job = { id: undefined, name: 'escrows.auto-release', data: { escrow_id: escrow.id } } as unknown as Job<JobData>;
      const byBuyer = async (): Promise<Outcome> => {
        if (round % 2 === 0) {
          const res = await client.post(`/api/escrows/${escrow.id}/release`).set(buyerAuth[0]!).send({});
          return res.status === 200 ? { status: 200 } : { status: res.status, code: res.body.error.code as string, state: res.body.error.status };
        }
        const s = await settle(escrows.release(undefined, { userId: buyer.id, role: 'user' }, escrow.id));
        if (s.ok) return { status: 200 };
        const err = appErrorOf(s);
        return { status: err.status, code: err.code, state: err.extras.status };
      };
      const [timer, rel] = await both(() => settle(autoRelease(job)), byBuyer, round % 4 >= 2);
      expect(timer.ok, timer.ok ? '' : String(timer.err)).to.equal(true);
      const timerReleased = timer.ok && (timer.value as { released: boolean }).released;
      if (timerReleased) {
        expect(rel).to.deep.equal({ status: 409, code: 'INVALID_STATE', state: 'released' });
      } else {
        expect(timer.ok && timer.value).to.deep.equal({ released: false });
        expect(rel).to.deep.equal({ status: 200 });
      }
      const released = (await db('escrow_events').where({ escrow_id: escrow.id, event: 'escrow.released' })) as { data: { by: string } }[];
      expect(released).to.have.length(1);
      expect(released[0]!.data.by).to.equal(timerReleased ? 'autoRelease' : 'release');
      expect((await escrowRow(escrow.id)).status).to.equal('released');
      expect(await entries(escrow.id, 'escrow_release')).to.equal(1);
      books.released(AMOUNT, FEE);
      await books.check();
    }
  });

  it('escrows between the same two people created at once, in both directions, never deadlock (public profile counters lock in user id order)', async () => {
    // Each creation's transaction stays open a moment after the insert, as a keyed request's does.
    const N = 40;
    const made = await Promise.allSettled(
      Array.from({ length: N }, (_, i) =>
        db.transaction(async (trx) => {
          await escrows.createDirect(trx, { userId: i % 2 === 0 ? buyer.id : seller.id, role: 'user' }, {
            role: i % 2 === 0 ? 'buyer' : 'seller',
            counterparty_username: i % 2 === 0 ? seller.username : buyer.username,
            item_name: `Race ${i}`,
            amount: 50_000,
          });
          await trx.raw('SELECT pg_sleep(0.01)');
        }),
      ),
    );
    expect(made.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String(r.reason))).to.deep.equal([]);
    const counts = await db('public_profiles').whereIn('user_id', [buyer.id, seller.id]).select<{ escrows_count: number }[]>('escrows_count');
    expect(counts.map((c) => Number(c.escrows_count))).to.deep.equal([N, N]);
  });

  it('a creation locks the parties\' public profile rows only at its commit, so one seller\'s escrows are not created one at a time', async () => {
    const count = async () => Number((await db('public_profiles').where({ user_id: seller.id }).first<{ escrows_count: number }>('escrows_count')).escrows_count);
    const before = await count();
    const trx = await db.transaction();
    try {
      await escrows.createDirect(trx, { userId: buyer.id, role: 'user' }, { role: 'buyer', counterparty_username: seller.username, item_name: 'Open', amount: 50_000 });
      // The seller's row is free while the creating transaction is still open (NOWAIT fails if locked).
      await db.transaction(async (other) => {
        await other.raw('SELECT 1 FROM public_profiles WHERE user_id = ? FOR UPDATE NOWAIT', [seller.id]);
      });
      expect(await count()).to.equal(before);
      await commitTransaction(trx);
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
    expect(await count()).to.equal(before + 1);
  });
});

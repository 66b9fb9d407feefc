/**
 * The console's dispute and withdrawal queues (issue 46, "every queue pages, searches and
 * filters"). The dispute queue: the
 * longest waiting first, keyset pages that reach every dispute once, search by a dispute's or
 * escrow's id and by part of the item or of either party's e-mail, username or name (LIKE
 * wildcards taken literally), filters by status and by how long a dispute has waited, the
 * filters kept on the next page's link, and 400 INVALID_QUERY for filters out of range. The
 * withdrawal queue, through the same helpers: pending requests only, the longest waiting
 * first, search by the withdrawal's or requester's id and the requester's e-mail, username or
 * name, the waiting filter.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { QUEUE_PAGE } from '../../../shared/staff/queue.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser, signIn } from '../../factories/users.js';
import { createWithdrawal } from '../../factories/withdrawals.js';

const agent = () => supertest.agent(createApp().callback());
const ROW = /<tr data-id="([0-9a-f-]{36})">/g;
const idsIn = (text: string): string[] => [...text.matchAll(ROW)].map((m) => m[1]!);
/** A signed-in admin's browser. */
async function staffBrowser(fullName: string): Promise<ReturnType<typeof agent>> {
  const admin = (await createUser({ role: 'admin', fullName })).user;
  const browser = agent();
  await signIn(browser, admin.email);
  return browser;
}

const nextLink = (text: string): string | null => {
  const m = /<a id="next-page" href="([^"]+)">/.exec(text);
  return m ? m[1]!.replace(/&amp;/g, '&') : null;
};

describe('operator console: the dispute queue (issue 46)', () => {
  let browser: ReturnType<typeof agent>;
  beforeEach(async () => {
    browser = await staffBrowser('Staff Queue');
  });
  afterEach(() => clock.reset());

  /** A dispute on a new escrow whose item is `item`, opened `hoursAgo` hours before now. */
  async function dispute(item: string, hoursAgo: number, status: 'open' | 'on_hold' = 'open') {
    const made = await createEscrow({ status: 'disputed', item });
    const d = (await db('disputes').where({ escrow_id: made.escrow.id }).first()) as { id: string };
    // On hold is a ruling staff recorded (who and when).
    const ruled = status === 'on_hold' ? { resolved_by: (await createUser({ role: 'admin' })).user.id, resolved_at: new Date() } : {};
    await db('disputes')
      .where({ id: d.id })
      .update({ status, ...ruled, created_at: new Date(Date.now() - hoursAgo * 3_600_000) });
    return { id: d.id, escrow: made.escrow, buyer: made.buyer, seller: made.seller };
  }

  it('the longest waiting first, in pages that reach every dispute once, the filters kept on the next page', async () => {
    const tag = `Antre${Date.now()}`;
    const made = [];
    for (let i = 0; i < QUEUE_PAGE + 2; i += 1) made.push(await dispute(`${tag} ${i}`, 200 - i));
    const first = await browser.get(`/admin/disputes?q=${tag}`);
    expect(first.status).to.equal(200);
    expect(idsIn(first.text)).to.deep.equal(made.slice(0, QUEUE_PAGE).map((d) => d.id));
    const link = nextLink(first.text);
    expect(link).to.match(new RegExp(`^/admin/disputes\\?q=${tag}&cursor=`));
    const second = await browser.get(link!);
    expect(idsIn(second.text)).to.deep.equal(made.slice(QUEUE_PAGE).map((d) => d.id));
    expect(nextLink(second.text)).to.equal(null);
    // The filter form shows what was asked.
    expect(first.text).to.include(`name="q" value="${tag}"`);
  });

  it('searches by dispute id, escrow id, item, e-mail, username and name; wildcards are literal', async () => {
    const tag = `Cari${Date.now()}`;
    const a = await dispute(`${tag} kamera`, 5);
    const b = await dispute(`${tag} 100% asli`, 4);
    const find = async (q: string) => idsIn((await browser.get(`/admin/disputes?q=${encodeURIComponent(q)}`)).text);
    expect(await find(a.id)).to.deep.equal([a.id]);
    expect(await find(b.escrow.id)).to.deep.equal([b.id]);
    expect(await find(`${tag} KAMERA`)).to.deep.equal([a.id]);
    expect(await find(a.buyer.email.toUpperCase())).to.deep.equal([a.id]);
    expect(await find(b.seller.username)).to.deep.equal([b.id]);
    expect(await find(`${tag} 100%`)).to.deep.equal([b.id]);
    expect(await find(`${tag}_`)).to.deep.equal([]);
    const none = await browser.get(`/admin/disputes?q=${tag}-nothing`);
    expect(none.text).to.include('id="none"');
  });

  it('filters by status (open, on hold, both) and by how long a dispute has waited', async () => {
    const tag = `Saring${Date.now()}`;
    const old = await dispute(`${tag} lama`, 50);
    const held = await dispute(`${tag} ditahan`, 30, 'on_hold');
    const fresh = await dispute(`${tag} baru`, 1);
    const list = async (query: string) => idsIn((await browser.get(`/admin/disputes?q=${tag}&${query}`)).text);
    expect(await list('')).to.deep.equal([old.id, held.id, fresh.id]);
    expect(await list('status=open')).to.deep.equal([old.id, fresh.id]);
    expect(await list('status=on_hold')).to.deep.equal([held.id]);
    expect(await list('older_than_hours=24')).to.deep.equal([old.id, held.id]);
    expect(await list('status=open&older_than_hours=24')).to.deep.equal([old.id]);
    const page = await browser.get(`/admin/disputes?q=${tag}&status=on_hold`);
    expect(page.text).to.match(/<option value="on_hold" selected>/);
  });

  it('refuses filters out of range and a cursor it did not give with 400 INVALID_QUERY', async () => {
    for (const query of ['status=closed', 'older_than_hours=0', 'older_than_hours=1.5', 'older_than_hours=8785', `q=${'x'.repeat(201)}`, 'cursor=bm90LWEtY3Vyc29y']) {
      const res = await browser.get(`/admin/disputes?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.text, query).to.include('INVALID_QUERY');
    }
  });
});

describe('operator console: the withdrawal queue (issue 46)', () => {
  let browser: ReturnType<typeof agent>;
  beforeEach(async () => {
    browser = await staffBrowser('Staff Payout Queue');
  });

  /** A pending (or rejected) withdrawal requested `hoursAgo` hours before now by a new account named `name`. */
  async function request(name: string, hoursAgo: number, status: 'pending' | 'rejected' = 'pending') {
    const { withdrawal, user } = await createWithdrawal({ status });
    await db('users').where({ id: user.id }).update({ full_name: name });
    await db('withdrawals').where({ id: withdrawal.id }).update({ created_at: new Date(Date.now() - hoursAgo * 3_600_000) });
    return { id: withdrawal.id, user };
  }

  it('pending requests only, the longest waiting first; search by id, e-mail, username and name; the waiting filter', async () => {
    const tag = `Tarik${Date.now()}`;
    const old = await request(`${tag} Lama`, 30);
    const fresh = await request(`${tag} Baru`, 2);
    await request(`${tag} Ditolak`, 40, 'rejected');
    const list = async (query: string) => {
      const res = await browser.get(`/admin/withdrawals?${query}`);
      expect(res.status, query).to.equal(200);
      return idsIn(res.text);
    };
    expect(await list(`q=${tag}`)).to.deep.equal([old.id, fresh.id]);
    expect(await list(`q=${tag}&older_than_hours=24`)).to.deep.equal([old.id]);
    expect(await list(`q=${fresh.id}`)).to.deep.equal([fresh.id]);
    expect(await list(`q=${old.user.id}`)).to.deep.equal([old.id]);
    expect(await list(`q=${encodeURIComponent(fresh.user.email.toUpperCase())}`)).to.deep.equal([fresh.id]);
    expect(await list(`q=${old.user.username}`)).to.deep.equal([old.id]);
    expect((await browser.get('/admin/withdrawals?older_than_hours=x')).status).to.equal(400);
  });
});

describe('operator console: the accounts list (issue 46)', () => {
  let browser: ReturnType<typeof agent>;
  beforeEach(async () => {
    browser = await staffBrowser('Staff Accounts');
  });

  it('newest first in pages that reach every account once; search by id, e-mail, username and name; the joined filter', async () => {
    const tag = `akun${Date.now()}`;
    const base = Date.now() - 100 * 3_600_000;
    const rows = Array.from({ length: QUEUE_PAGE + 1 }, (_, i) => ({
      email: `${tag}.${i}@example.com`,
      username: `${tag}_${i}`,
      full_name: `Pengguna ${tag} ${i}`,
      role: 'user',
      status: 'active',
      // Two accounts share a joining instant: the id orders them.
      created_at: new Date(base + Math.max(i, 1) * 3_600_000),
      updated_at: new Date(),
    }));
    const made = await db('users').insert(rows).returning<{ id: string; created_at: Date }[]>(['id', 'created_at']);
    const newest = [...made].sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : -1)).map((u) => u.id);
    const first = await browser.get(`/admin/users?q=${tag}`);
    expect(first.status).to.equal(200);
    expect(idsIn(first.text)).to.deep.equal(newest.slice(0, QUEUE_PAGE));
    const link = nextLink(first.text);
    expect(link).to.match(new RegExp(`^/admin/users\\?q=${tag}&cursor=`));
    const second = await browser.get(link!);
    expect(idsIn(second.text)).to.deep.equal(newest.slice(QUEUE_PAGE));
    expect(nextLink(second.text)).to.equal(null);

    const find = async (query: string) => idsIn((await browser.get(`/admin/users?${query}`)).text);
    expect(await find(`q=${made[7]!.id}`)).to.deep.equal([made[7]!.id]);
    expect(await find(`q=${encodeURIComponent(`${tag}.3@EXAMPLE.com`)}`)).to.deep.equal([made[3]!.id]);
    expect(await find(`q=${tag}_42`)).to.deep.equal([made[42]!.id]);
    expect(await find(`q=${encodeURIComponent(`Pengguna ${tag} 17`)}`)).to.deep.equal([made[17]!.id]);
    // Joined at least 98 hours ago: the accounts made at base + 1 hour (two) and base + 2 hours.
    expect((await find(`q=${tag}&older_than_hours=98`)).sort()).to.deep.equal([made[0]!.id, made[1]!.id, made[2]!.id].sort());
    expect((await browser.get('/admin/users?older_than_hours=0')).status).to.equal(400);
  });
});

/**
 * The operator console in English or Indonesian: English by default (a staff tool); GET
 * /admin/language/:lang (id or en only, admin only) keeps the staff member's choice in the
 * `console_lang` cookie (HttpOnly, SameSite=Lax, Path=/admin, a year) and goes back to the
 * page it was asked from when that is a console page safeNext admits, else to /admin. Every
 * page then answers in that language (<html lang>, headings, buttons, the flash), with status
 * values and event names left as machine codes.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { db } from '../../../shared/db.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser, signIn } from '../../factories/users.js';
import { createWithdrawal } from '../../factories/withdrawals.js';

const agent = () => supertest.agent(createApp().callback());

/** A signed-in admin's browser. */
async function staffBrowser(fullName: string): Promise<ReturnType<typeof agent>> {
  const admin = (await createUser({ role: 'admin', fullName })).user;
  const browser = agent();
  await signIn(browser, admin.email);
  return browser;
}

/** The `console_lang` cookie a response sets, or undefined. */
function langCookie(res: { headers: Record<string, unknown> }): string | undefined {
  const set = res.headers['set-cookie'];
  const all = Array.isArray(set) ? (set as string[]) : typeof set === 'string' ? [set] : [];
  return all.find((c) => c.startsWith('console_lang='));
}

/** The nav's link to the other language, as a path to follow. */
function switchLink(text: string): string {
  const m = /<a href="([^"]+)" id="lang-switch"/.exec(text);
  expect(m, 'the nav links to the other language').to.not.equal(null);
  return m![1]!.replace(/&amp;/g, '&');
}

/** A row of the table `id` with the given data-id. */
function rowOf(text: string, id: string): string {
  const start = text.indexOf(`<tr data-id="${id}">`);
  expect(start, `row ${id}`).to.be.greaterThan(-1);
  return text.slice(start, text.indexOf('</tr>', start));
}

describe('operator console: English or Indonesian (the console_lang cookie)', () => {
  let browser: ReturnType<typeof agent>;
  beforeEach(async () => {
    browser = await staffBrowser('Staf Bahasa');
  });

  it('is English by default, with a link to Indonesian back to the same page', async () => {
    const home = await browser.get('/admin');
    expect(home.status).to.equal(200);
    expect(home.text).to.include('<html lang="en"').and.include('<h1>Operator console</h1>').and.include('>Disputes to rule</a>');
    expect(home.text).to.include('<a href="/admin/language/id?next=%2Fadmin" id="lang-switch" lang="id" hreflang="id">Bahasa Indonesia</a>');
    expect(home.text).not.to.include('Konsol operator');
    const queue = await browser.get('/admin/disputes?status=open&q=kamera');
    expect(switchLink(queue.text)).to.equal(`/admin/language/id?next=${encodeURIComponent('/admin/disputes?status=open&q=kamera')}`);
  });

  it('switches to Indonesian: the cookie, back to the page it was asked from, and every page in Indonesian', async () => {
    const tag = `Bahasa${Date.now()}`;
    const { escrow } = await createEscrow({ status: 'disputed', item: `${tag} kamera` });
    const dispute = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
    const { withdrawal, user } = await createWithdrawal();

    // The nav's link on the dispute queue, followed: 303 back to the same page, the cookie set.
    const queuePath = `/admin/disputes?q=${tag}&status=open`;
    const english = await browser.get(queuePath);
    const switched = await browser.get(switchLink(english.text));
    expect(switched.status).to.equal(303);
    expect(switched.headers.location).to.equal(queuePath);
    const cookie = langCookie(switched);
    expect(cookie).to.match(/^console_lang=id;/);
    expect(cookie).to.match(/; path=\/admin(;|$)/i).and.match(/; httponly/i).and.match(/; samesite=lax/i);
    const expires = /; expires=([^;]+)/i.exec(cookie!);
    expect(expires, 'the cookie lasts a year').to.not.equal(null);
    const days = (new Date(expires![1]!).getTime() - Date.now()) / 86_400_000;
    expect(days).to.be.within(364, 366);

    // The overview.
    const home = await browser.get('/admin');
    expect(home.status).to.equal(200);
    expect(home.text).to.include('<html lang="id"').and.include('<h1>Konsol operator</h1>').and.include('>Sengketa yang perlu diputus</a>');
    expect(home.text).to.include('>Pengguna</a>').and.include('>Pendanaan</a>').and.include('>Keluar</button>');
    expect(home.text).to.include('<a href="/admin/language/en?next=%2Fadmin" id="lang-switch" lang="en" hreflang="en">English</a>');
    expect(home.text).not.to.include('Operator console').and.not.include('Disputes to rule').and.not.include('Sign out');

    // The dispute queue with its row: headings, the filter form, the ruling form; the status stays a code.
    const queue = await browser.get(queuePath);
    expect(queue.status).to.equal(200);
    expect(queue.text).to.include('<html lang="id"').and.include('<h1>Sengketa yang perlu diputus</h1>');
    expect(queue.text).to.include('<label>Cari <input type="search" name="q"').and.include('<button type="submit">Saring</button>').and.include('Menunggu minimal');
    expect(queue.text).to.include('<option value="open" selected>Terbuka</option>');
    const row = rowOf(queue.text, dispute.id);
    expect(row).to.include('<td class="status">open</td>');
    expect(row).to.include('aria-label="Putusan"').and.include('<option value="release">Teruskan ke penjual</option>').and.include('<button type="submit">Putuskan</button>');
    expect(row).to.include('data-confirm="Catat putusan ini?').and.include('Pembeli: ').and.include('Penjual: ');
    expect(queue.text).not.to.include('Disputes to rule').and.not.include('>Rule</button>').and.not.include('>Filter</button>');

    // The withdrawal queue.
    const withdrawals = await browser.get(`/admin/withdrawals?q=${withdrawal.id}`);
    expect(withdrawals.status).to.equal(200);
    expect(withdrawals.text).to.include('<html lang="id"').and.include('<h1>Penarikan yang perlu disetujui</h1>');
    const wrow = rowOf(withdrawals.text, withdrawal.id);
    expect(wrow).to.include('<button type="submit">Setujui</button>').and.include('<button type="submit" class="danger">Tolak</button>');
    expect(wrow).to.include('data-confirm="Setujui pencairan ini?"');
    expect(withdrawals.text).not.to.include('Withdrawals to approve').and.not.include('>Approve</button>');

    // A record page, with a move's flash.
    const record = await browser.get(`/admin/users/${user.id}?done=user.suspend`);
    expect(record.status).to.equal(200);
    expect(record.text).to.include('<html lang="id"').and.include('<dt>Saldo</dt>').and.include('<h2>Sesi</h2>').and.include('<h2>Penarikan</h2>');
    expect(record.text).to.include('<p class="notice" id="flash">Selesai: user.suspend</p>');
    expect(record.text).to.include('<button type="submit" class="danger">Bekukan</button>').and.include('<button type="submit">Setujui</button>');
    expect(record.text).to.include('<strong id="user-status">active</strong>');
    expect(record.text).not.to.include('Done: ').and.not.include('<dt>Balance</dt>').and.not.include('>Suspend</button>');
    expect(switchLink(record.text)).to.equal(`/admin/language/en?next=${encodeURIComponent(`/admin/users/${user.id}?done=user.suspend`)}`);

    // Every other page answers in Indonesian too.
    for (const path of ['/admin/payments', '/admin/orders', '/admin/kyb', '/admin/funding', '/admin/instructions', '/admin/payouts', '/admin/rulings', '/admin/users', `/admin/escrows/${escrow.id}`]) {
      const res = await browser.get(path);
      expect(res.status, path).to.equal(200);
      expect(res.text, path).to.include('<html lang="id"').and.include('<title>Konsol · ');
    }

    // Another staff member's console is still English: the choice is the browser's.
    const other = await staffBrowser('Staf Lain');
    expect((await other.get('/admin')).text).to.include('<html lang="en"').and.include('<h1>Operator console</h1>');
  });

  it('switches back to English', async () => {
    await browser.get('/admin/language/id?next=%2Fadmin');
    expect((await browser.get('/admin')).text).to.include('<html lang="id"');
    const back = await browser.get(`/admin/language/en?next=${encodeURIComponent('/admin/withdrawals')}`);
    expect(back.status).to.equal(303);
    expect(back.headers.location).to.equal('/admin/withdrawals');
    expect(langCookie(back)).to.match(/^console_lang=en;/);
    const page = await browser.get('/admin/withdrawals');
    expect(page.text).to.include('<html lang="en"').and.include('<h1>Withdrawals to approve</h1>');
    expect(page.text).not.to.include('Penarikan yang perlu disetujui');
  });

  it('goes back only to a console page: anything off-site or outside /admin leads to /admin', async () => {
    const refused = [
      '//evil.example', 'https://evil.example', 'https://evil.example/admin', '/\\evil.example', '//evil.example/admin', 'javascript:alert(1)',
      `/pay/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, '/sign-in', '/v1/me', '/admin/../v1/me', '/adminx', '',
    ];
    for (const next of refused) {
      const res = await browser.get(`/admin/language/id?next=${encodeURIComponent(next)}`);
      expect(res.status, next).to.equal(303);
      expect(res.headers.location, next).to.equal('/admin');
      expect(langCookie(res), next).to.match(/^console_lang=id;/);
    }
    const none = await browser.get('/admin/language/id');
    expect(none.status).to.equal(303);
    expect(none.headers.location).to.equal('/admin');
  });

  it('knows only id and en (404 for any other language)', async () => {
    for (const lang of ['fr', 'ID', 'english', 'id-ID']) {
      const res = await browser.get(`/admin/language/${lang}?next=%2Fadmin`);
      expect(res.status, lang).to.equal(404);
      expect(langCookie(res), lang).to.equal(undefined);
    }
  });

  it('staff only: anonymous visitors are sent to sign in, users get 403, neither gets the cookie', async () => {
    const anonymous = await agent().get('/admin/language/id?next=%2Fadmin%2Fdisputes');
    expect(anonymous.status).to.equal(303);
    expect(anonymous.headers.location).to.equal(`/sign-in?next=${encodeURIComponent('/admin')}`);
    expect(langCookie(anonymous)).to.equal(undefined);

    const member = (await createUser({ role: 'user', fullName: 'Pengguna Biasa' })).user;
    const userBrowser = agent();
    await signIn(userBrowser, member.email);
    const refused = await userBrowser.get('/admin/language/id?next=%2Fadmin');
    expect(refused.status).to.equal(403);
    expect(langCookie(refused)).to.equal(undefined);
  });
});

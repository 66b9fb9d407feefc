/**
 * `npm run screenshots`: pictures of the hosted checkout and the operator console for
 * reviewers, written to docs/screenshots/*.png (or SCREENSHOTS_DIR). Not run by the tests.
 *
 * It uses its own database beside the configured one (<name>_screens, recreated) and Redis
 * database 13 (SCREENSHOTS_REDIS_DB), fills them with a demo seller, buyer, escrows and a dispute through the
 * services (and a workspace's submitted KYB application), serves the app on 127.0.0.1 and
 * drives Debian's chromium (playwright-core): the checkout on a 390 px phone; the console's
 * queues and record pages (an account, an escrow, a workspace) at 1280 px, two at 390 px.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const baseDb = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/escrow';
const dbUrl = new URL(baseDb);
dbUrl.pathname = `${dbUrl.pathname.replace(/^\//, '').replace(/_screens$/, '')}_screens`;
const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
redisUrl.pathname = `/${process.env.SCREENSHOTS_REDIS_DB ?? '13'}`;
Object.assign(process.env, {
  DATABASE_URL: dbUrl.toString(),
  REDIS_URL: redisUrl.toString(),
  QUEUE_PREFIX: 'escrow-screens',
  SANDBOX_MODE: 'true',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});

const tsx = path.resolve('node_modules/.bin/tsx');
for (const args of [['scripts/ensure-db.ts', dbUrl.toString(), '--recreate'], ['scripts/migrate.ts']]) {
  const run = spawnSync(tsx, args, { stdio: 'inherit', env: process.env });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

const executablePath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].find((p): p is string => !!p && existsSync(p));
if (!executablePath) {
  console.error('no Chromium: run scripts/ensure-chromium.sh (as root) or set CHROMIUM_PATH');
  process.exit(1);
}

const { chromium } = await import('playwright-core');
const { createApp } = await import('../api/app.js');
const { clock } = await import('../shared/clock.js');
const { db } = await import('../shared/db.js');
const { redis } = await import('../shared/redis.js');
const { closeQueues } = await import('../shared/queues.js');
const { hashPassword } = await import('../shared/auth/passwords.js');
const users = await import('../shared/users/repo.js');
const escrows = await import('../shared/escrows/service.js');
const { openDispute } = await import('../shared/disputes/service.js');
const enterprise = await import('../shared/enterprise/service.js');
const kyb = await import('../shared/kyb/service.js');
const uploadsRepo = await import('../shared/uploads/repo.js');

const PASSWORD = 'Demo1Password';
const now = clock.now();
async function person(email: string, fullName: string, role: 'user' | 'admin' = 'user') {
  return users.insert(db, {
    email,
    username: email.split('@')[0]!.replace(/[^a-z0-9_]/g, '_'),
    full_name: fullName,
    password_hash: await hashPassword(PASSWORD),
    role,
    status: 'active',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  });
}

await db('payment_gateways').insert({
  provider: 'sandbox', display_name: 'Sandbox', supported_methods: ['qris', 'bank_transfer', 'gopay'], is_manual: false,
  enabled: true, in_maintenance: false, config: null, fee_percent: '0.7', fee_fixed: 0, sort_order: 0, created_at: now, updated_at: now,
}).onConflict('provider').merge();
const seller = await person('toko.sepatu@example.com', 'Toko Sepatu Nusantara');
await users.update(db, seller.id, { kyc_status: 'verified' });
const buyer = await person('budi@example.com', 'Budi Santoso');
const admin = await person('staf@example.com', 'Staf Operasional', 'admin');
const asBuyer = { userId: buyer.id, role: 'user' as const };
const direct = (item: string, amount: number) =>
  escrows.createDirect(undefined, asBuyer, { role: 'buyer', counterparty_username: seller.username, item_name: item, amount, category: 'goods', description: 'Ukuran 42, warna hitam, baru dengan kotak.' });
const open = await direct('Sepatu lari Aero 42', 1_250_000);
const toPay = await direct('Jaket gunung', 850_000);
const paid = await direct('Tas ransel 30L', 450_000);
await escrows.markPaid(undefined, paid.id, { reference: 'demo' });
const disputed = await direct('Kamera bekas', 3_200_000);
await escrows.markPaid(undefined, disputed.id, { reference: 'demo' });
await openDispute(asBuyer, disputed.id, { reason_category: 'item_not_as_described', description: 'Lensa tergores, tidak sesuai foto.' });
const expired = await direct('Jam tangan', 600_000);
await db('escrows').where({ id: expired.id }).update({ expires_at: new Date(now.getTime() - 60_000) });

// A workspace's KYB application, complete and submitted (its documents are rows without files).
const founder = await person('rina@kopisenja.example', 'Rina Wijaya');
const registered = await enterprise.register(
  { userId: founder.id, userName: founder.full_name },
  { legal_name: 'PT Kopi Senja Nusantara', display_name: 'Kopi Senja', entity_type: 'pt', nib: '9120001234567', country_code: 'ID' },
  { ip: '127.0.0.1' },
);
const kybSubject = { type: 'account' as const, workspace: registered.workspace, counterparty: null, invitedBy: null };
const kybCaller = { userId: founder.id, userName: founder.full_name, full: true, mayEdit: true };
const drafted = await kyb.saveDraft(undefined, kybCaller, kybSubject, {
  company: { npwp: '012345678901234', address: 'Jl. Braga No. 21, Bandung', industry: 'Food and beverage', monthly_volume: '1b_to_10b', website: 'https://kopisenja.example' },
  people: [
    { full_name: 'Rina Wijaya', position: 'Direktur Utama', roles: ['director', 'beneficial_owner', 'signer'], id_type: 'nik', id_number: '3273014506890002', nationality: 'ID', ownership_pct: 70 },
    { full_name: 'Arif Hidayat', position: 'Komisaris', roles: ['commissioner', 'shareholder'], id_type: 'nik', id_number: '3273011203850007', nationality: 'ID', ownership_pct: 30 },
  ],
  bank: { bank_name: 'BCA', bank_account_holder: 'PT Kopi Senja Nusantara', account_number: '7310456789' },
});
const [rina, arif] = drafted.application.people;
for (const [doc_type, person_id] of [['akta_pendirian'], ['sk_kemenkumham'], ['bank_proof'], ['ktp', rina!.id], ['ktp', arif!.id]] as const) {
  const id = randomUUID();
  await uploadsRepo.insert(db, {
    id, stored_name: `${id}.pdf`, user_id: founder.id, purpose: 'kyb', mime: 'application/pdf', size: 184_320,
    sha256: createHash('sha256').update(id).digest('hex'), storage_key: `files/${id}.pdf`, created_at: now,
  });
  await kyb.attachDocument(undefined, kybCaller, kybSubject, { upload_id: id, doc_type, ...(person_id ? { person_id } : {}) });
}
const kybSubmitted = await kyb.submit(undefined, kybCaller, kybSubject);

const server = createApp().listen(0, '127.0.0.1');
await once(server, 'listening');
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const out = path.resolve(process.env.SCREENSHOTS_DIR ?? 'docs/screenshots');
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  const phone = await browser.newContext({ baseURL: base, viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const p = await phone.newPage();
  const shot = async (name: string) => {
    await p.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
    console.log(path.relative(process.cwd(), path.join(out, `${name}.png`)));
  };
  await p.goto(`/pay/${open.id}`);
  await shot('checkout-preview');
  await p.click('#sign-in-to-pay');
  await shot('sign-in');
  await p.fill('#email', buyer.email);
  await p.fill('#password', PASSWORD);
  await Promise.all([p.waitForURL(`**/pay/${open.id}`), p.click('#sign-in-button')]);
  await shot('checkout-methods');
  await p.check('input[value="sandbox:qris"]');
  await Promise.all([p.waitForURL(`**/pay/${open.id}`), p.click('#pay-button')]);
  await shot('checkout-qris');
  await p.goto(`/pay/${toPay.id}?lang=en`);
  await p.check('input[value="sandbox:bank_transfer"]');
  await Promise.all([p.waitForURL(`**/pay/${toPay.id}?lang=en`), p.click('#pay-button')]);
  await shot('checkout-va-en');
  await p.goto(`/pay/${paid.id}`);
  await shot('checkout-paid');
  await p.goto(`/pay/${expired.id}`);
  await shot('checkout-expired');

  const desk = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 800 } });
  const c = await desk.newPage();
  const desktopShot = async (name: string) => {
    await c.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
    console.log(path.relative(process.cwd(), path.join(out, `${name}.png`)));
  };
  await c.goto('/admin/disputes');
  await c.fill('#email', admin.email);
  await c.fill('#password', PASSWORD);
  await Promise.all([c.waitForURL('**/admin/disputes'), c.click('#sign-in-button')]);
  await desktopShot('console-disputes');
  await c.goto('/admin');
  await desktopShot('console-overview');
  await c.goto('/admin/kyb');
  await desktopShot('console-kyb-queue');
  await c.goto(`/admin/kyb/${kybSubmitted.application.id}`);
  await desktopShot('console-kyb-application');
  // Record pages (issue 46): an account, an escrow with its dispute, a workspace.
  await c.goto(`/admin/users/${buyer.id}`);
  await desktopShot('console-user');
  await c.goto(`/admin/escrows/${disputed.id}`);
  await desktopShot('console-escrow');
  await c.goto(`/admin/workspaces/${registered.workspace.id}`);
  await desktopShot('console-workspace');
  // The same session on a 390 px phone: tables become stacked rows.
  await c.setViewportSize({ width: 390, height: 844 });
  await c.goto('/admin/disputes');
  await desktopShot('console-disputes-phone');
  await c.goto(`/admin/escrows/${disputed.id}`);
  await desktopShot('console-escrow-phone');
} finally {
  await browser.close();
  server.close();
  await closeQueues();
  await db.destroy();
  redis.disconnect();
}

/**
 * `npm run chaos -- --overload`: 10x the per-user limit (authenticated reads for one user,
 * 50 at a time), 400 escrow creations by one buyer at once, and 10x the per-address
 * sign-in limit, through both copies. Every answer must be 2xx/4xx, every 429 must carry
 * `Retry-After`, never a 5xx, and every accepted escrow must be in the database.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { inPool } from '../lib/db.js';
import { statusList } from '../lib/format.js';
import { call, dataOf, signers, type Actor, type Answer } from './client.js';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

export async function overload(actors: Actor[], _admin: Actor, db: Knex): Promise<void> {
  // Per user: AUTH_RATE_LIMIT_PER_MINUTE (300) shared over every authenticated route; 10x in a burst.
  const user = actors[0]!;
  const perUser = Number(process.env.AUTH_RATE_LIMIT_PER_MINUTE ?? 300) * 10;
  const answers: Answer[] = [];
  await inPool(range(perUser), 50, async () => {
    answers.push(await call('GET', '/v1/user/balance', { key: user.key }));
  });
  // Writes under the same overload: every accepted escrow must exist.
  const seller = actors[1]!;
  const accepted: string[] = [];
  await inPool(range(400), 50, async (n) => {
    const fields: Record<string, string> = { seller: seller.id, item: `Overload ${n}`, category: 'goods', ref: `ovl-${n}-${randomBytes(3).toString('hex')}`, v: '1', expires: String(Math.floor(Date.now() / 1000) + 3600) };
    const a = await call('POST', '/api/escrows/from-link', { key: actors[2]!.key, idem: true, body: { ...fields, sig: signers.fields(seller.secret!, fields), amount: 100_000 } });
    answers.push(a);
    if (a.status === 201) accepted.push(String(dataOf(a).id));
  });
  // Per IP: sign-in (30 per minute per address), 10x.
  await inPool(range(300), 30, async () => {
    answers.push(await call('POST', '/v1/auth/login', { body: { email: 'nobody@chaos.test', password: 'wrong-password-1' } }));
  });
  const by = new Map<number, number>();
  for (const a of answers) by.set(a.status, (by.get(a.status) ?? 0) + 1);
  const problems: string[] = [];
  const noRetry = answers.filter((a) => a.status === 429 && !a.headers.get('retry-after')).length;
  if (noRetry > 0) problems.push(`${noRetry} answers 429 without Retry-After`);
  const fives = answers.filter((a) => a.status >= 500).length;
  if (fives > 0) problems.push(`${fives} answers 5xx`);
  const found = accepted.length === 0 ? 0 : Number(((await db('escrows').whereIn('id', accepted).count<{ n: string }[]>('* as n'))[0]!).n);
  if (found !== accepted.length) problems.push(`accepted escrows: ${accepted.length}, in the database ${found}`);
  console.log(`chaos overload: ${answers.length} requests; answers ${statusList(new Map([...by].sort((a, b) => a[0] - b[0])))}; accepted writes ${accepted.length}, found ${found}`);
  if (problems.length > 0) {
    for (const p of problems) console.error(`chaos overload: DIFFERENCE: ${p}`);
    process.exitCode = 1;
  } else console.log('chaos overload: differences found: 0');
}

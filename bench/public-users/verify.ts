/**
 * Before measuring, the listing answers what it should (the answer cache is off, so these
 * are the queries the bench then times): a sort page is full and in its order, a search
 * returns only matching profiles, its `total` equals a count of the matching listed
 * profiles in the database, and no answer carries contact data.
 */
import { benchDb } from '../lib/db.js';
import { call, dataOf, expect } from '../lib/http.js';

interface Listing {
  users: { username: string; full_name: string; total_escrows_completed: number; joined_at: string }[];
  total: number;
}

export async function checkListing(base: string, words: readonly string[]): Promise<void> {
  const db = await benchDb();
  const top = await call(`${base}/v1/public/users?sort=top&limit=24`);
  const t = dataOf<Listing>(top);
  expect(top.status === 200 && t?.users.length === 24 && t.users.every((u, i) => i === 0 || t.users[i - 1]!.total_escrows_completed >= u.total_escrows_completed), 'sort=top: a full page, most completed escrows first', top);
  expect(!/"email"|"phone"|"balance"|"user_id"/.test(top.text), 'no contact data, balance or internal id in a public answer', top);
  const fresh = await call(`${base}/v1/public/users?sort=new&limit=24`);
  const f = dataOf<Listing>(fresh);
  expect(fresh.status === 200 && f?.users.length === 24 && f.users.every((u, i) => i === 0 || f.users[i - 1]!.joined_at >= u.joined_at), 'sort=new: a full page, newest first', fresh);
  const checked = [...new Set(['budi', 'zzz', 'ra', ...words.slice(12, 16)])];
  for (const term of checked) {
    const a = await call(`${base}/v1/public/users?search=${encodeURIComponent(term)}&limit=50`);
    const d = dataOf<Listing>(a);
    const lower = term.toLowerCase();
    const [{ n } = { n: '-1' }] = await db('public_profiles')
      .where({ listed: true })
      .whereRaw(`search_text LIKE ?`, [`%${lower.replace(/[\\%_]/g, (c) => `\\${c}`)}%`])
      .count<{ n: string }[]>('* as n');
    expect(
      a.status === 200 && d !== undefined && d.total === Number(n) && d.users.every((u) => u.username.includes(lower) || u.full_name.toLowerCase().includes(lower)),
      `search "${term}": only matching profiles, total ${n} as counted in the database`,
      a,
    );
  }
  console.log(`[public] the sorts are ordered and full, ${checked.length} searches return only matches with the database's count, no contact data`);
}

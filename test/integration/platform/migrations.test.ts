import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import { db } from '../../../shared/db.js';

describe('platform: migrations', () => {
  it('are named YYYYMMDDHHMMSS_kebab-name and recorded without extension (sources and build agree)', async () => {
    const files = (await readdir('migrations')).filter((f) => f.endsWith('.ts')).sort();
    for (const f of files) expect(f).to.match(/^\d{14}_[a-z0-9]+(-[a-z0-9]+)*\.ts$/);
    const recorded = (await db('knex_migrations').select('name').orderBy('name')) as { name: string }[];
    expect(recorded.map((r) => r.name)).to.deep.equal(files.map((f) => f.replace(/\.ts$/, '')));
  });
});

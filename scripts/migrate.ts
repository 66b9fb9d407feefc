/** Applies pending migrations (Procfile `release`). */
import { db } from '../shared/db.js';
import { migrateLatest } from '../shared/migrator.js';

try {
  const applied = await migrateLatest(db);
  console.log(applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: up to date');
} finally {
  await db.destroy();
}

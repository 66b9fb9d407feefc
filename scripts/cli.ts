/**
 * Operator CLI: `npm run cli -- create-admin <email>` (password from NEW_ADMIN_PASSWORD for a
 * new account; an existing account is promoted).
 */
import { db } from '../shared/db.js';
import { ensureAdmin } from '../shared/seed/sandbox.js';

const [command, email] = process.argv.slice(2);
try {
  if (command === 'create-admin' && email) {
    const outcome = await ensureAdmin(db, email, process.env.NEW_ADMIN_PASSWORD || null, true);
    console.log(`admin ${email}: ${outcome}`);
  } else {
    console.error('usage: npm run cli -- create-admin <email>   (NEW_ADMIN_PASSWORD=... for a new account)');
    process.exitCode = 2;
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
} finally {
  await db.destroy();
}

/** `npm run ledger:check`: verifies every ledger invariant; exits 1 on any violation. */
import { db } from '../shared/db.js';
import { checkLedger } from '../shared/ledger/index.js';

try {
  const violations = await checkLedger(db);
  if (violations.length === 0) {
    console.log('ledger: all invariants hold');
  } else {
    for (const v of violations) console.error(`ledger violation [${v.rule}]: ${v.detail}`);
    process.exitCode = 1;
  }
} finally {
  await db.destroy();
}

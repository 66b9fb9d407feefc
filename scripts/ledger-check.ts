/**
 * `npm run ledger:check`: verifies every ledger invariant and hash chain (decision 0028); exits 1 on any violation. Each run's
 * result is recorded (shared/ledger/check-record.ts; issue 47: /metrics reports the latest and
 * an alert wakes someone when it failed or has not run for a day).
 */
import { db } from '../shared/db.js';
import { checkLedger } from '../shared/ledger/index.js';
import { recordLedgerCheck } from '../shared/ledger/check-record.js';
import { redis } from '../shared/redis.js';

try {
  const violations = await checkLedger(db);
  await recordLedgerCheck(violations);
  if (violations.length === 0) {
    console.log('ledger: all invariants hold');
  } else {
    for (const v of violations) console.error(`ledger violation [${v.rule}]: ${v.detail}`);
    process.exitCode = 1;
  }
} finally {
  await db.destroy();
  redis.disconnect();
}

/**
 * `npm run ledger:check`: verifies every ledger invariant; exits 1 on any violation. Each run
 * is recorded in `ledger_check_runs` (issue 47: /metrics reports the latest, an alert wakes
 * someone when it failed or has not run for a day).
 */
import { clock } from '../shared/clock.js';
import { db } from '../shared/db.js';
import { checkLedger } from '../shared/ledger/index.js';

try {
  const violations = await checkLedger(db);
  await db('ledger_check_runs').insert({
    ran_at: clock.now(),
    ok: violations.length === 0,
    violations: violations.length,
    first_violations: JSON.stringify(violations.slice(0, 20)),
  });
  if (violations.length === 0) {
    console.log('ledger: all invariants hold');
  } else {
    for (const v of violations) console.error(`ledger violation [${v.rule}]: ${v.detail}`);
    process.exitCode = 1;
  }
} finally {
  await db.destroy();
}

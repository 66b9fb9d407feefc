/**
 * Operator CLI:
 * - `npm run cli -- create-admin <email>` (password from NEW_ADMIN_PASSWORD for a new
 *   account; an existing account is promoted);
 * - `npm run cli -- set-pricing <workspace id> <rate bp|platform> <minimum|platform> "<set by>" [<from volume>:<rate bp> ...]`
 *   sets a workspace's platform-fee pricing (spec 4.5: set by the operator only; existing
 *   deals keep theirs).
 */
import { db } from '../shared/db.js';
import { setPricing } from '../shared/deals/pricing.js';
import { ensureAdmin } from '../shared/seed/sandbox.js';

const USAGE = [
  'usage: npm run cli -- create-admin <email>   (NEW_ADMIN_PASSWORD=... for a new account)',
  '       npm run cli -- set-pricing <workspace id> <rate bp|platform> <minimum rupiah|platform> "<set by>" [<from volume>:<rate bp> ...]',
].join('\n');

const orPlatform = (v: string): number | null => (v === 'platform' ? null : Number(v));

const [command, ...args] = process.argv.slice(2);
try {
  if (command === 'create-admin' && args[0]) {
    const outcome = await ensureAdmin(db, args[0], process.env.NEW_ADMIN_PASSWORD || null, true);
    console.log(`admin ${args[0]}: ${outcome}`);
  } else if (command === 'set-pricing' && args.length >= 4) {
    const [workspaceId, rate, min, setBy, ...tierArgs] = args as [string, string, string, string, ...string[]];
    const tiers = tierArgs.map((t) => {
      const [from, bp] = t.split(':');
      return { minVolume: Number(from), rateBp: Number(bp) };
    });
    await setPricing(undefined, workspaceId, { rateBp: orPlatform(rate), minFee: orPlatform(min), tiers, setBy });
    console.log(`pricing of ${workspaceId}: rate ${rate}, minimum ${min}, ${tiers.length} tier(s)`);
  } else {
    console.error(USAGE);
    process.exitCode = 2;
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
} finally {
  await db.destroy();
}

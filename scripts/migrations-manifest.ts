/**
 * `npm run migrations:manifest [-- --out-of-order <file> ...]`: adds the migrations not yet
 * in migrations/manifest.json, with the sha256 of their bytes (decision 0024). Never rewrites
 * a listed checksum: it refuses, writing nothing, when a listed file changed or is missing,
 * or when a new file sorts before the latest listed one (unless named with --out-of-order).
 * Running it again adds nothing.
 */
import { appendToManifest, ManifestError, MANIFEST_FILE } from '../shared/migration-manifest.js';

const args = process.argv.slice(2);
const outOfOrder: string[] = [];
for (let i = 0; i < args.length; i += 1) {
  const next = args[i + 1];
  if (args[i] === '--out-of-order' && next !== undefined) {
    outOfOrder.push(next);
    i += 1;
  } else {
    console.error(`usage: npm run migrations:manifest [-- --out-of-order <file> ...] (unknown argument ${args[i]})`);
    process.exit(2);
  }
}

try {
  const added = appendToManifest(undefined, { outOfOrder });
  console.log(added.length ? `migrations/${MANIFEST_FILE}: added ${added.join(', ')}` : `migrations/${MANIFEST_FILE}: up to date`);
} catch (err) {
  if (!(err instanceof ManifestError)) throw err;
  console.error(`migrations/${MANIFEST_FILE} left unchanged:\n- ${err.problems.join('\n- ')}`);
  process.exit(1);
}

/**
 * `npm run migrations:manifest [-- --out-of-order <file> ...]`: lists the migrations not yet
 * in the manifest, with the sha256 of their bytes, in a new segment (migrations/manifest-NNNN.json;
 * decision 0024). Never rewrites a segment: it refuses, writing nothing, when a listed file changed or is missing,
 * or when a new file sorts before the latest listed one (unless named with --out-of-order).
 * Running it again adds nothing.
 */
import { appendToManifest, ManifestError } from '../shared/migration-manifest.js';

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
  console.log(added.length ? `migrations manifest: listed ${added.join(', ')} in a new segment` : 'migrations manifest: up to date');
} catch (err) {
  if (!(err instanceof ManifestError)) throw err;
  console.error(`migrations manifest left unchanged:\n- ${err.problems.join('\n- ')}`);
  process.exit(1);
}

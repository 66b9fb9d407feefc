/**
 * The manifest of released migrations (decision 0024): every file of migrations/ with the
 * sha256 of its bytes as they are (nothing normalised, so not even a line-ending change
 * hides). It is kept in segments that are, like migrations, never edited once released:
 * `migrations/manifest.json` first, then `manifest-0002.json`, `manifest-0003.json`, …; the
 * list is their entries in that order. `checkManifest` lists every way the directory differs
 * from it (a test fails on any); `appendToManifest` (`npm run migrations:manifest`) writes the
 * new files' entries into a new segment and never rewrites one.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MANIFEST_FILE = 'manifest.json';
/** A manifest segment's name: `manifest.json` (the first) or `manifest-NNNN.json`. */
const SEGMENT = /^manifest(?:-(?!0001)(\d{4}))?\.json$/;
const segmentNumber = (name: string): number => Number(SEGMENT.exec(name)?.[1] ?? 1);
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations');

export interface ManifestEntry {
  file: string;
  sha256: string;
  /** Recorded deliberately although it sorts before an earlier entry (`--out-of-order`). */
  outOfOrder?: true;
}

export interface Manifest {
  about: string;
  migrations: ManifestEntry[];
}

export const MANIFEST_ABOUT =
  'Every released migration with the sha256 of its bytes. A released migration is never edited, renamed or deleted: ' +
  'a change is a new migration, later than every one listed, added here with `npm run migrations:manifest` (decision 0024).';

export class ManifestError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ManifestError';
  }
}

const NEVER_EDITED = 'a released migration is never edited: write a new one';

export function sha256Of(dir: string, file: string): string {
  return createHash('sha256').update(readFileSync(path.join(dir, file))).digest('hex');
}

/** The manifest's segments, in order: manifest.json, then manifest-0002.json, … */
export function manifestSegments(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => SEGMENT.test(name))
    .sort((a, b) => segmentNumber(a) - segmentNumber(b));
}

/** Every file of the directory but the manifest's segments, sorted; anything else than a file is refused. */
export function migrationFiles(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true }).filter((e) => !SEGMENT.test(e.name));
  const odd = entries.filter((e) => !e.isFile()).map((e) => e.name);
  if (odd.length > 0) throw new ManifestError(odd.map((n) => `migrations/${n} is not a file: migrations/ holds migration files only`));
  return entries.map((e) => e.name).sort();
}

/** One segment's entries. */
function readSegment(dir: string, name: string): ManifestEntry[] {
  const raw = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as unknown;
  const list = (raw as { migrations?: unknown } | null)?.migrations;
  if (!Array.isArray(list)) throw new ManifestError([`migrations/${name} has no "migrations" list`]);
  return list.map((e: unknown, i): ManifestEntry => {
    const { file, sha256, outOfOrder } = (e ?? {}) as Record<string, unknown>;
    if (typeof file !== 'string' || typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256) || (outOfOrder !== undefined && outOfOrder !== true)) {
      throw new ManifestError([`migrations/${name}: entry ${i} is not {"file", "sha256" (64 hex digits), "outOfOrder"?: true}`]);
    }
    return outOfOrder ? { file, sha256, outOfOrder } : { file, sha256 };
  });
}

/** The whole list: every segment's entries in segment order. A missing manifest.json fails (ENOENT): it is never rebuilt. */
export function readManifest(dir: string): Manifest {
  const segments = manifestSegments(dir).filter((name) => name !== MANIFEST_FILE);
  const migrations = [MANIFEST_FILE, ...segments].flatMap((name) => readSegment(dir, name));
  return { about: MANIFEST_ABOUT, migrations };
}

/** Problems with the listed entries themselves: order, duplicates, changed or missing files. */
function listedProblems(dir: string, manifest: Manifest, files: Set<string>): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  let latest = '';
  for (const { file, sha256, outOfOrder } of manifest.migrations) {
    if (seen.has(file)) problems.push(`migrations/${MANIFEST_FILE} lists ${file} twice`);
    seen.add(file);
    if (file <= latest && !outOfOrder) {
      problems.push(
        `${file} is listed after ${latest} but sorts before it: a new migration's timestamp sorts after every listed one ` +
          '(rename it later if it was never released; history is never inserted into)',
      );
    }
    if (file > latest) latest = file;
    if (!files.has(file)) {
      problems.push(
        `${file} is listed as released but is missing from migrations/ (deleted or renamed): ${NEVER_EDITED}. ` +
          `Restore it (git checkout main -- migrations/${file}) and put the change in a new migration`,
      );
    } else {
      const now = sha256Of(dir, file);
      if (now !== sha256) {
        problems.push(
          `${file} changed since it was released (listed sha256 ${sha256}, now ${now}): ${NEVER_EDITED}. ` +
            `Restore it (git checkout main -- migrations/${file}) and put the change in a new migration, later than every listed one`,
        );
      }
    }
  }
  return problems;
}

function latestListed(manifest: Manifest): string {
  return manifest.migrations.reduce((max, e) => (e.file > max ? e.file : max), '');
}

/** Every way migrations/ differs from its manifest; empty when they agree. */
export function checkManifest(dir: string = MIGRATIONS_DIR): string[] {
  const files = migrationFiles(dir);
  const manifest = readManifest(dir);
  const problems = listedProblems(dir, manifest, new Set(files));
  const listed = new Set(manifest.migrations.map((e) => e.file));
  const latest = latestListed(manifest);
  for (const file of files.filter((f) => !listed.has(f))) {
    problems.push(
      file < latest
        ? `${file} is not in migrations/${MANIFEST_FILE} and sorts before the listed ${latest}: a new migration's timestamp ` +
            'sorts after every listed one; rename it (if it is a renamed released migration, restore the old name)'
        : `${file} is not in migrations/${MANIFEST_FILE}: add a new migration deliberately with \`npm run migrations:manifest\` ` +
            'and commit the manifest with it (if it is a renamed released migration, restore the old name)',
    );
  }
  return problems;
}

/**
 * Adds every file not yet listed, in name order, with its sha256. Refuses (ManifestError,
 * nothing written) when a listed file changed or is missing, or when a new file sorts before
 * the latest listed one and is not named in `outOfOrder`. Running it again adds nothing.
 */
export function appendToManifest(dir: string = MIGRATIONS_DIR, options: { outOfOrder?: string[] } = {}): string[] {
  const files = migrationFiles(dir);
  const manifest = readManifest(dir);
  const problems = listedProblems(dir, manifest, new Set(files));
  const listed = new Set(manifest.migrations.map((e) => e.file));
  const fresh = files.filter((f) => !listed.has(f));
  const allowed = new Set(options.outOfOrder ?? []);
  for (const name of allowed) {
    if (!fresh.includes(name)) problems.push(`--out-of-order ${name}: no such new (unlisted) file in migrations/`);
  }
  const latest = latestListed(manifest);
  for (const file of fresh) {
    if (file < latest && !allowed.has(file)) {
      problems.push(
        `${file} sorts before the listed ${latest}: a new migration's timestamp sorts after every listed one. ` +
          'Rename it to a later timestamp (it was never released), or, after checking it depends on nothing later, ' +
          `record it deliberately with \`npm run migrations:manifest -- --out-of-order ${file}\``,
      );
    }
  }
  if (problems.length > 0) throw new ManifestError(problems);
  if (fresh.length === 0) return [];
  const migrations = fresh.map((file): ManifestEntry => (file < latest ? { file, sha256: sha256Of(dir, file), outOfOrder: true } : { file, sha256: sha256Of(dir, file) }));
  const next = Math.max(...manifestSegments(dir).map(segmentNumber)) + 1;
  writeManifest(dir, { about: MANIFEST_ABOUT, migrations }, segmentName(next));
  return fresh;
}

export const segmentName = (n: number): string => (n === 1 ? MANIFEST_FILE : `manifest-${String(n).padStart(4, '0')}.json`);

/** Writes a segment (manifest.json unless named): only a new one, or a test's copy. */
export function writeManifest(dir: string, manifest: Manifest, name: string = MANIFEST_FILE): void {
  writeFileSync(path.join(dir, name), `${JSON.stringify(manifest, null, 2)}\n`);
}

import { mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  appendToManifest,
  checkManifest,
  MANIFEST_FILE,
  ManifestError,
  manifestSegments,
  migrationFiles,
  readManifest,
  sha256Of,
  writeManifest,
  MANIFEST_ABOUT,
} from '../../../shared/migration-manifest.js';

// Decision 0024: released migrations are listed with their checksums; any edit, deletion,
// rename or unlisted file fails here (and so `npm test` and CI).
describe('platform: migrations manifest', () => {
  it('migrations/ agrees with its manifest (manifest.json and its later segments; a released migration is never edited: write a new one)', () => {
    const problems = checkManifest();
    expect(problems, `\n${problems.join('\n')}\n`).to.deep.equal([]);
    expect(readManifest(path.resolve('migrations')).migrations.map((e) => e.file)).to.include('20261205000100_create-approvals-payouts-documents.ts');
  });

  describe('the check and the script, on a copy', () => {
    let dir = '';
    const write = (file: string, text: string) => writeFileSync(path.join(dir, file), text);
    const manifestText = () => readFileSync(path.join(dir, MANIFEST_FILE), 'utf8');

    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'manifest-'));
      write('20260101000000_a.ts', 'export const up = 1;\n');
      write('20260102000000_b.ts', 'export const up = 2;\n');
      writeManifest(dir, {
        about: MANIFEST_ABOUT,
        migrations: migrationFiles(dir).map((file) => ({ file, sha256: sha256Of(dir, file) })),
      });
      expect(checkManifest(dir)).to.deep.equal([]);
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('fails when a listed file changes, even only its line endings, and the script refuses to rewrite it', () => {
      write('20260101000000_a.ts', 'export const up = 1;\r\n');
      const problems = checkManifest(dir);
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^20260101000000_a\.ts changed since it was released .*a released migration is never edited: write a new one/);
      const before = manifestText();
      expect(() => appendToManifest(dir)).to.throw(ManifestError, /20260101000000_a\.ts changed/);
      expect(manifestText()).to.equal(before);
    });

    it('fails when a listed file is deleted', () => {
      unlinkSync(path.join(dir, '20260102000000_b.ts'));
      expect(checkManifest(dir)).to.satisfy((p: string[]) => p.length === 1 && /^20260102000000_b\.ts is listed as released but is missing/.test(p[0]!));
      expect(() => appendToManifest(dir)).to.throw(ManifestError, /missing/);
    });

    it('fails when a listed file is renamed (the old name missing, the new one unlisted)', () => {
      renameSync(path.join(dir, '20260102000000_b.ts'), path.join(dir, '20260102000000_bee.ts'));
      const problems = checkManifest(dir);
      expect(problems).to.have.length(2);
      expect(problems[0]).to.match(/^20260102000000_b\.ts is listed as released but is missing/);
      expect(problems[1]).to.match(/^20260102000000_bee\.ts is not in migrations\/manifest\.json/);
    });

    it('fails on a migration not in the manifest until the script adds it; the script is idempotent', () => {
      write('20260103000000_c.ts', 'export const up = 3;\n');
      expect(checkManifest(dir)).to.satisfy((p: string[]) => p.length === 1 && /npm run migrations:manifest/.test(p[0]!));
      expect(appendToManifest(dir)).to.deep.equal(['20260103000000_c.ts']);
      expect(checkManifest(dir)).to.deep.equal([]);
      const after = manifestText();
      expect(appendToManifest(dir)).to.deep.equal([]);
      expect(manifestText()).to.equal(after);
      expect(readManifest(dir).migrations.at(-1)).to.deep.equal({ file: '20260103000000_c.ts', sha256: sha256Of(dir, '20260103000000_c.ts') });
    });

    it('lists new migrations in a new segment, never in a released one: manifest.json stays byte for byte, a later run writes the next segment', () => {
      const first = manifestText();
      write('20260103000000_c.ts', 'export const up = 3;\n');
      expect(appendToManifest(dir)).to.deep.equal(['20260103000000_c.ts']);
      expect(manifestText()).to.equal(first);
      expect(manifestSegments(dir)).to.deep.equal([MANIFEST_FILE, 'manifest-0002.json']);
      const second = readFileSync(path.join(dir, 'manifest-0002.json'), 'utf8');
      write('20260104000000_d.ts', 'export const up = 4;\n');
      expect(appendToManifest(dir)).to.deep.equal(['20260104000000_d.ts']);
      expect(readFileSync(path.join(dir, 'manifest-0002.json'), 'utf8')).to.equal(second);
      expect(manifestSegments(dir)).to.deep.equal([MANIFEST_FILE, 'manifest-0002.json', 'manifest-0003.json']);
      expect(readManifest(dir).migrations.map((e) => e.file)).to.deep.equal(['20260101000000_a.ts', '20260102000000_b.ts', '20260103000000_c.ts', '20260104000000_d.ts']);
      expect(checkManifest(dir)).to.deep.equal([]);
      // A segment is checked like the rest: an edited file listed there fails.
      write('20260103000000_c.ts', 'export const up = 33;\n');
      expect(checkManifest(dir).join('\n')).to.match(/^20260103000000_c\.ts changed since it was released/);
    });

    it('refuses a new migration that sorts before a listed one, unless recorded deliberately out of order', () => {
      write('20260101120000_late.ts', 'export const up = 4;\n');
      expect(checkManifest(dir)).to.satisfy((p: string[]) => p.length === 1 && /sorts before the listed 20260102000000_b\.ts/.test(p[0]!));
      const before = manifestText();
      expect(() => appendToManifest(dir)).to.throw(ManifestError, /sorts before the listed 20260102000000_b\.ts.*--out-of-order/);
      expect(manifestText()).to.equal(before);
      expect(appendToManifest(dir, { outOfOrder: ['20260101120000_late.ts'] })).to.deep.equal(['20260101120000_late.ts']);
      expect(readManifest(dir).migrations.at(-1)).to.include({ file: '20260101120000_late.ts', outOfOrder: true });
      expect(checkManifest(dir)).to.deep.equal([]);
    });

    it('fails when the manifest itself is reordered or lists a file twice', () => {
      const manifest = readManifest(dir);
      writeManifest(dir, { ...manifest, migrations: [...manifest.migrations].reverse() });
      expect(checkManifest(dir)).to.satisfy((p: string[]) => p.length === 1 && /20260101000000_a\.ts is listed after 20260102000000_b\.ts but sorts before it/.test(p[0]!));
      writeManifest(dir, { ...manifest, migrations: [...manifest.migrations, manifest.migrations[1]!] });
      expect(checkManifest(dir).join('\n')).to.match(/lists 20260102000000_b\.ts twice/);
    });

    it('fails when the manifest is missing (it is never rebuilt from the files)', () => {
      unlinkSync(path.join(dir, MANIFEST_FILE));
      expect(() => checkManifest(dir)).to.throw(/ENOENT/);
      expect(() => appendToManifest(dir)).to.throw(/ENOENT/);
    });
  });
});

/**
 * The error catalogue (issue 24): errors are made by named factories in each feature's
 * `errors.ts` (or the shared `errors` of shared/errors.ts); the kinds in shared/errors.ts
 * own the HTTP statuses, so no other file of shared/, api/ or workers/ writes one.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { AppError, errors, fail } from '../../../shared/errors.js';
import { uploadError } from '../../../shared/uploads/errors.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(ROOT, dir, name);
    if (statSync(path).isDirectory()) return sources(relative(ROOT, path));
    return name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The code of a file without its comments (a comment may say "answers 409 X"). */
function code(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('error catalogue', () => {
  const files = [...sources('shared'), ...sources('api'), ...sources('workers')];

  it('no error is made with a status number: every one comes from a named factory', () => {
    const offenders = files.filter((f) => /AppError\.legacy\(|new AppError\(\s*\d/.test(code(f)));
    expect(offenders).to.deep.equal([]);
  });

  it('outside shared/errors.ts, domain code (shared/, workers/) writes no HTTP status number', () => {
    const statusLike = /\b(status|httpStatus|statusCode)\s*[:=]\s*[1-5]\d\d\b|\bkind:\s*[1-5]\d\d\b/;
    const offenders = [...sources('shared'), ...sources('workers')].filter((f) => f !== 'shared/errors.ts' && statusLike.test(code(f)));
    expect(offenders).to.deep.equal([]);
  });

  it('a kind owns its status; the message is English with the Indonesian kept beside it', () => {
    const e = fail.conflict('INVALID_STATE', { en: 'Escrow is funded', id: 'Escrow sudah dibayar' }, { extras: { status: 'funded' } });
    expect(e).to.be.instanceOf(AppError);
    expect([e.status, e.code, e.message, e.text.id, e.extras]).to.deep.equal([409, 'INVALID_STATE', 'Escrow is funded', 'Escrow sudah dibayar', { status: 'funded' }]);
    expect(errors.rateLimited(7).headers).to.deep.equal({ 'Retry-After': '7' });
    expect(errors.notFound().status).to.equal(404);
  });

  it('bilingual errors (uploads) answer Indonesian and carry both texts; localised() picks the language', () => {
    const e = uploadError('FILE_TOO_LARGE');
    expect(e.status).to.equal(413);
    expect(e.message).to.equal(e.extras.message_id);
    expect(e.extras.message_en).to.equal('The file is larger than this upload type allows');
    expect(e.localised(true).message).to.equal('The file is larger than this upload type allows');
    expect(e.localised(false).message).to.equal(e.text.id);
  });
});

/**
 * Decision 0025 (issue 43, "One data path"): the service talks to Postgres only through the
 * public APIs of knex and node-postgres, and never puts values into SQL text. This test reads
 * every source file of api/, shared/ and workers/ and fails when one of these comes back:
 *  - an import or require of a library's private files (`knex/lib/...`, `pg/lib/...`, ...);
 *  - a read of a driver's private fields (pg's statement records and queues, knex's marks);
 *  - a hand-written quoting helper (`quoteLiteral`, `sqlLiteral`, `escapeLiteral`, ...);
 *  - a value written into SQL text between quotes (`'${...}'` in a template).
 * The pool guard of shared/db.ts (development and test only) is the one place that wraps
 * knex's client methods; it is named below.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';

const ROOT = new URL('../../../', import.meta.url).pathname;
const DIRS = ['api', 'shared', 'workers'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|js|mjs|cjs)$/.test(name)) out.push(path);
  }
  return out;
}

const files = DIRS.flatMap((d) => sources(join(ROOT, d))).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

/** Lines of `text` matching `pattern`, as "file:line: text". */
function hits(pattern: RegExp, only?: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    if (only && !only(path)) continue;
    text.split('\n').forEach((line, i) => {
      if (pattern.test(line)) out.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

describe('platform: one data path on public APIs (decision 0025)', () => {
  it('reads the source files it checks', () => {
    expect(files.length).to.be.greaterThan(100);
    expect(files.some((f) => f.path === 'shared/db.ts')).to.equal(true);
  });

  it("imports no library's private files (knex/lib, pg/lib, pg-pool or pg-protocol internals)", () => {
    const privatePath = /(['"`])(knex\/(lib|src|types)\/|pg\/lib\/|pg-pool\/|pg-protocol\/|pg-cursor\/)[^'"`]*\1/;
    expect(hits(privatePath)).to.deep.equal([]);
    // createRequire reaches around a package's exports: never for the database libraries.
    expect(hits(/createRequire\(.*(knex|pg)/)).to.deep.equal([]);
  });

  it("reads no driver's private fields", () => {
    const fields = [
      'parsedStatements',
      'submittedNamedStatements',
      '_queryQueue',
      '_sentQueryQueue',
      '_activeQuery',
      '_queryable',
      '_connected',
      '_ending',
      '__knexUid',
      '__knexTxId',
      '__knex__disposed',
      'method-constants',
      'prepareValue',
    ];
    expect(hits(new RegExp(`\\b(${fields.join('|')})\\b`))).to.deep.equal([]);
  });

  it("wraps knex's client methods only in the pool guard of shared/db.ts", () => {
    const found = hits(/\.(acquireConnection|releaseConnection)\b|client\.transaction\s*=/);
    expect(found.every((line) => line.startsWith('shared/db.ts:')), found.join('\n')).to.equal(true);
    const db = files.find((f) => f.path === 'shared/db.ts')!.text;
    const guard = db.slice(db.indexOf('function guardPool('));
    for (const line of found) {
      const text = line.slice(line.indexOf(': ') + 2);
      expect(guard.includes(text), `outside the pool guard: ${line}`).to.equal(true);
    }
  });

  it('has no hand-written quoting: values go as bound parameters', () => {
    expect(hits(/\b(quoteLiteral|sqlLiteral|inlineValues|escapeLiteral|literalOf)\b/)).to.deep.equal([]);
    // A value between quotes in a template is a value written into text.
    expect(hits(/'\$\{/)).to.deep.equal([]);
    // EXECUTE with arguments and PREPARE ... AS are the simple protocol's way to run a named statement with literals.
    expect(hits(/`(EXECUTE|PREPARE) /)).to.deep.equal([]);
  });
});

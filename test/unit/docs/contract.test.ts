import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { contractDifference, openDataAnswers } from '../../helpers/contract.js';

const run = promisify(execFile);

describe('the published contract (issue 45)', () => {
  describe('the answer check every supertest request runs (test/helpers/contract.ts)', () => {
    const healthz = (status: number, body: unknown, contentType = 'application/json; charset=utf-8') =>
      contractDifference({ method: 'GET', url: 'http://127.0.0.1/healthz', status, contentType, body });

    it('passes an answer the document describes', () => {
      expect(healthz(200, { success: true, data: { status: 'ok' } })).to.equal(undefined);
    });

    it('fails a member the document does not describe, at any depth', () => {
      expect(healthz(200, { success: true, data: { status: 'ok', uptime: 3 } })).to.match(/uptime/);
      expect(healthz(200, { success: true, data: { status: 'ok' }, meta: {} })).to.match(/meta/);
    });

    it('fails a wrong value or type, and a missing required member', () => {
      expect(healthz(200, { success: true, data: { status: 'fine' } })).to.match(/data\/status/);
      expect(healthz(200, { success: true, data: { status: 1 } })).to.match(/data\/status/);
      expect(healthz(200, { success: true })).to.match(/data/);
    });

    it('fails a status or a media type the operation does not list', () => {
      expect(healthz(418, { success: false, error: { code: 'TEAPOT', message: 'x' } })).to.match(/status 418 is not documented/);
      expect(healthz(200, 'ok', 'text/plain')).to.match(/media type text\/plain is not documented/);
    });

    it('matches a literal path segment before a parameter, and checks unknown routes as error envelopes', () => {
      const unknown = { method: 'GET', url: '/v1/nothing-here', status: 404, contentType: 'application/json' };
      expect(contractDifference({ ...unknown, body: { success: false, error: { code: 'NOT_FOUND', message: 'No route' } } })).to.equal(undefined);
      expect(contractDifference({ ...unknown, body: { success: true } })).to.match(/not an error envelope/);
    });
  });

  it('every operation describes the data of its success answers (no open schemas)', () => {
    expect(openDataAnswers()).to.deep.equal([]);
  });

  it('the typed client (client/openapi.d.ts) is what openapi-typescript makes of the document now', async function () {
    this.timeout(60_000);
    const dir = await mkdtemp(path.join(tmpdir(), 'client-'));
    try {
      const out = path.join(dir, 'openapi.d.ts');
      // The same command as `npm run client:generate`, writing to a temporary file.
      const script = (JSON.parse(await readFile('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts['client:generate']!;
      const [bin, ...args] = script.split(' ');
      expect(bin).to.equal('openapi-typescript');
      await run(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', ...args.map((a, i) => (args[i - 1] === '-o' ? out : a))]);
      const [fresh, committed] = await Promise.all([readFile(out, 'utf8'), readFile('client/openapi.d.ts', 'utf8')]);
      expect(fresh === committed, 'client/openapi.d.ts is stale: run `npm run client:generate`').to.equal(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

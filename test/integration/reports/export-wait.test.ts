/**
 * A new CSV export waits for the exports worker (EXPORT_WAIT_MS; decision 0020): when the
 * worker builds it within the wait, the request answers the file itself (200, an
 * attachment); when it does not, 202 with the export id, as before. `npm test` runs with no
 * wait; this file sets one for its own requests.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { dealWorld } from '../../factories/deals.js';
import { config } from '../../../shared/config.js';

describe('CSV exports wait for the worker (EXPORT_WAIT_MS)', () => {
  const client = api();
  const before = config.exportWaitMs;
  afterEach(() => {
    config.exportWaitMs = before;
  });

  for (const path of ['/v1/enterprise/reports/deals.csv', '/v1/enterprise/reports/disbursements.csv', '/v1/enterprise/audit/export.csv']) {
    it(`${path}: built within the wait, the request answers the file (200 attachment)`, async () => {
      config.exportWaitMs = 5_000;
      const w = await dealWorld(client);
      const request = client.get(path).set(w.h.finance);
      // The worker runs while the request waits.
      const worker = (async () => {
        await new Promise((r) => setTimeout(r, 200));
        await runJobs(['exports']);
      })();
      const [res] = await Promise.all([request, worker]);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['content-type']).to.match(/^text\/csv/);
      expect(res.headers['content-disposition']).to.match(/^attachment; filename="[a-z]+-[0-9a-f-]{36}\.csv"$/);
    });
  }

  it('not built within the wait: 202 with the export id, after about the wait', async () => {
    config.exportWaitMs = 300;
    const w = await dealWorld(client);
    const started = Date.now();
    const res = await client.get('/v1/enterprise/reports/deals.csv').set(w.h.finance);
    expect(res.status).to.equal(202);
    expect(Date.now() - started).to.be.at.least(280);
    expect(res.headers.location).to.match(/export_id=/);
  });
});

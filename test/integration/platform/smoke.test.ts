import { expect } from 'chai';
import { api } from '../../helpers/app.js';

describe('platform smoke', () => {
  it('answers /healthz with the envelope and the frame\'s headers, ahead of the frame (no request metrics)', async () => {
    const app = api();
    const res = await app.get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ success: true, data: { status: 'ok' } });
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect(res.headers['x-content-type-options']).to.equal('nosniff');
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    const given = await app.get('/healthz').set('X-Request-Id', 'probe-42').expect(200);
    expect(given.headers['x-request-id']).to.equal('probe-42');
    const unsafe = await app.get('/healthz').set('X-Request-Id', 'bad id with spaces').expect(200);
    expect(unsafe.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    const head = await app.head('/healthz').expect(200);
    expect(head.headers['x-content-type-options']).to.equal('nosniff');
    // Other methods and spellings go on to the routers.
    expect((await app.post('/healthz').send({})).status).to.equal(404);
    expect((await app.get('/healthz?probe=1')).status).to.equal(200);
    const metrics = await app.get('/metrics').expect(200);
    expect(metrics.text).to.not.match(/route="\/healthz"/);
  });
});

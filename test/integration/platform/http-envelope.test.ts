import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { PLAIN_ERROR_SECRET, PROBE_INSTANT, probeApi } from '../../helpers/platform-probe-router.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('platform: HTTP envelope and error shapes', () => {
  it('wraps a success in { success: true, data } as JSON', async () => {
    const res = await probeApi().get('/test/envelope').expect(200);
    expect(res.type).to.equal('application/json');
    expect(res.body).to.deep.equal({ success: true, data: { hello: 'world' } });
  });

  it('answers an unknown route 404 NOT_FOUND in the error envelope', async () => {
    for (const method of ['get', 'post', 'delete'] as const) {
      const res = await probeApi()[method]('/no/such/route').expect(404);
      expect(res.type).to.equal('application/json');
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('NOT_FOUND');
      expect(res.body.error.message).to.be.a('string').and.not.equal('');
      expect(Object.keys(res.body)).to.have.members(['success', 'error']);
    }
  });

  it('answers a plain thrown Error 500 INTERNAL_ERROR with nothing internal in the body', async () => {
    const res = await probeApi().get('/test/boom').set('X-Request-Id', 'boom-req-1').expect(500);
    expect(res.type).to.equal('application/json');
    expect(res.body.success).to.equal(false);
    expect(res.body.error.code).to.equal('INTERNAL_ERROR');
    expect(res.body.error.message).to.be.a('string').and.not.equal('');
    // Only the public members: no stack, no original message, no error name.
    expect(Object.keys(res.body.error)).to.have.members(['code', 'message', 'request_id']);
    expect(res.body.error.request_id).to.equal('boom-req-1');
    expect(res.text).to.not.include('hunter2');
    expect(res.text).to.not.include(PLAIN_ERROR_SECRET);
    expect(res.text).to.not.include('internal.ts');
    expect(res.text).to.not.match(/\bat .*\(.*:\d+:\d+\)/); // a stack frame
    expect(res.text.toLowerCase()).to.not.include('stack');
  });

  it('echoes a given X-Request-Id', async () => {
    const res = await probeApi().get('/test/envelope').set('X-Request-Id', 'client-req_42.a:b').expect(200);
    expect(res.headers['x-request-id']).to.equal('client-req_42.a:b');
  });

  it('generates a UUID request id when none (or an unsafe one) is given, on success and on error', async () => {
    const a = await probeApi().get('/test/envelope').expect(200);
    const b = await probeApi().get('/test/envelope').expect(200);
    const c = await probeApi().get('/nope').expect(404);
    for (const res of [a, b, c]) expect(res.headers['x-request-id']).to.match(UUID);
    expect(a.headers['x-request-id']).to.not.equal(b.headers['x-request-id']);

    const unsafe = await probeApi().get('/test/envelope').set('X-Request-Id', 'bad id\twith spaces').expect(200);
    expect(unsafe.headers['x-request-id']).to.match(UUID);
    const tooLong = await probeApi().get('/test/envelope').set('X-Request-Id', 'a'.repeat(129)).expect(200);
    expect(tooLong.headers['x-request-id']).to.match(UUID);
  });

  it('serialises timestamps as ISO 8601 UTC with milliseconds', async () => {
    clock.set(new Date('2026-11-22T10:11:12.000Z'));
    const res = await probeApi().get('/test/time').expect(200);
    const data = res.body.data;
    expect(data.fixed).to.equal('2026-11-22T07:05:09.045Z');
    expect(data.fixed).to.equal(PROBE_INSTANT.toISOString());
    expect(data.whole).to.equal('2027-01-01T00:00:00.000Z'); // milliseconds even when zero
    expect(data.now).to.equal('2026-11-22T10:11:12.000Z'); // the service clock, not the system clock
    expect(data.nested[0].at).to.equal('2026-11-22T07:05:09.045Z');
    for (const v of [data.fixed, data.whole, data.now, data.nested[0].at]) expect(v).to.match(ISO_UTC_MS);
  });

  it('answers a params validation failure 404 NOT_FOUND, a valid one 200', async () => {
    const bad = await probeApi().get('/test/items/not-a-uuid').expect(404);
    expect(bad.body.error.code).to.equal('NOT_FOUND');
    const id = '5f1c8f0e-8a3b-4c2d-9e4f-0a1b2c3d4e5f';
    const good = await probeApi().get(`/test/items/${id}`).expect(200);
    expect(good.body).to.deep.equal({ success: true, data: { id } });
  });
});

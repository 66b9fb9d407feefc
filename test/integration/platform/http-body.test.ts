import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { probeApi } from '../../helpers/platform-probe-router.js';

const MiB = 1024 * 1024;

/** Sends a Buffer as is (superagent would JSON-encode it for a JSON content type). */
const raw = (body: unknown): string => body as string;

/** A JSON body `{"s":"xxx..."}` of exactly `bytes` bytes. */
function jsonOfSize(bytes: number): string {
  const overhead = '{"s":""}'.length;
  return `{"s":"${'x'.repeat(bytes - overhead)}"}`;
}

describe('platform: request bodies', () => {
  describe('size limit (1 MiB)', () => {
    it('accepts a JSON body of exactly 1 MiB', async () => {
      const body = jsonOfSize(MiB);
      expect(Buffer.byteLength(body)).to.equal(MiB);
      const res = await probeApi().post('/test/size').set('Content-Type', 'application/json').send(body).expect(200);
      expect(res.body.data.length).to.equal(MiB - 8);
    });

    it('answers a body one byte over 1 MiB 413 FST_ERR_CTP_BODY_TOO_LARGE', async () => {
      const body = jsonOfSize(MiB + 1);
      const res = await probeApi().post('/test/size').set('Content-Type', 'application/json').send(body).expect(413);
      expect(res.type).to.equal('application/json');
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('FST_ERR_CTP_BODY_TOO_LARGE');
      expect(res.body.error.message).to.be.a('string');
    });

    it('answers an oversized body 413 even on an unknown route', async () => {
      const res = await probeApi()
        .post('/no/such/route')
        .set('Content-Type', 'application/json')
        .send(jsonOfSize(2 * MiB))
        .expect(413);
      expect(res.body.error.code).to.equal('FST_ERR_CTP_BODY_TOO_LARGE');
    });

    it('applies the limit to the inflated size of a compressed body', async () => {
      const zipped = gzipSync(Buffer.from(jsonOfSize(2 * MiB)));
      expect(zipped.length).to.be.below(64 * 1024);
      const res = await probeApi()
        .post('/test/size')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize(raw)
        .send(zipped)
        .expect(413);
      expect(res.body.error.code).to.equal('FST_ERR_CTP_BODY_TOO_LARGE');
    });

    it('reads a compressed body under the limit', async () => {
      const zipped = gzipSync(Buffer.from(jsonOfSize(1000)));
      const res = await probeApi()
        .post('/test/size')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize(raw)
        .send(zipped)
        .expect(200);
      expect(res.body.data.length).to.equal(1000 - 8);
    });
  });

  describe('malformed JSON', () => {
    for (const [label, text] of [
      ['truncated object', '{"note": "abc"'],
      ['trailing comma', '{"note": "abc",}'],
      ['bare word', 'hello'],
      ['JSON primitive (strict mode takes objects and arrays only)', '"just a string"'],
    ] as const) {
      it(`answers a ${label} 400 INVALID_BODY with details`, async () => {
        const res = await probeApi().post('/test/echo').set('Content-Type', 'application/json').send(text).expect(400);
        expect(res.type).to.equal('application/json');
        expect(res.body.success).to.equal(false);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(res.body.error.details).to.have.keys('formErrors', 'fieldErrors');
        expect(res.body.error.details.formErrors).to.be.an('array').that.is.not.empty;
        expect(res.body.error.details.fieldErrors).to.deep.equal({});
        expect(res.text).to.not.include('Unexpected token');
      });
    }

    it('answers a compressed body that does not inflate 400 INVALID_BODY, not 500', async () => {
      const res = await probeApi()
        .post('/test/size')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .send('{"s":"this is not gzip"}')
        .expect(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(res.body.error.details.formErrors).to.be.an('array').that.is.not.empty;
    });

    it('answers an unsupported Content-Encoding 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const res = await probeApi()
        .post('/test/size')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'x-unknown')
        .send('{"s":"a"}')
        .expect(415);
      expect(res.body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    });
  });

  describe('joi validation', () => {
    it('answers field failures 400 INVALID_BODY with { formErrors, fieldErrors } per field', async () => {
      const res = await probeApi()
        .post('/test/validate')
        .send({ name: 'ab', amount: 12.5, address: {}, email: 'a@b.c', surprise: 1 })
        .expect(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      const { formErrors, fieldErrors } = res.body.error.details;
      expect(formErrors).to.deep.equal([]);
      expect(fieldErrors).to.have.keys('name', 'amount', 'address.city', 'surprise');
      for (const messages of Object.values(fieldErrors)) {
        expect(messages).to.be.an('array').with.length.greaterThan(0);
        for (const m of messages as unknown[]) expect(m).to.be.a('string');
      }
      // Labels are not wrapped in quotes.
      expect(fieldErrors.name[0]).to.equal('name length must be at least 3 characters long');
    });

    it('puts object-level failures in formErrors', async () => {
      const res = await probeApi().post('/test/validate').send({ name: 'abc', amount: 10_000 }).expect(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(res.body.error.details.fieldErrors).to.deep.equal({});
      expect(res.body.error.details.formErrors).to.have.length(1);
      expect(res.body.error.details.formErrors[0]).to.include('phone').and.include('email');
    });

    it('refuses a JSON array where an object is expected', async () => {
      const res = await probeApi().post('/test/validate').send([{ name: 'abc' }]).expect(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(res.body.error.details.formErrors).to.have.length(1);
    });

    it('passes converted, validated values to the handler', async () => {
      const res = await probeApi()
        .post('/test/validate')
        .send({ name: 'abc', amount: '25000', phone: '0812' })
        .expect(200);
      expect(res.body.data.body).to.deep.equal({ name: 'abc', amount: 25000, phone: '0812' });
    });

    it('answers a bad query 400 INVALID_QUERY with details', async () => {
      const res = await probeApi().get('/test/list?limit=0&status=maybe').expect(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('INVALID_QUERY');
      expect(res.body.error.details.formErrors).to.deep.equal([]);
      expect(res.body.error.details.fieldErrors).to.have.keys('limit', 'status');

      const unknown = await probeApi().get('/test/list?sort=desc').expect(400);
      expect(unknown.body.error.code).to.equal('INVALID_QUERY');
      expect(unknown.body.error.details.fieldErrors).to.have.keys('sort');
    });

    it('converts a good query and applies defaults', async () => {
      const res = await probeApi().get('/test/list?limit=50&status=open').expect(200);
      expect(res.body.data.query).to.deep.equal({ limit: 50, status: 'open' });
      const defaults = await probeApi().get('/test/list').expect(200);
      expect(defaults.body.data.query).to.deep.equal({ limit: 20 });
    });
  });
});

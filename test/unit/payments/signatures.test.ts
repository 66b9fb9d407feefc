/**
 * Callback signatures, request signatures and callback parsing of the real gateway adapters
 * (decision D5). Every check is computed here from the provider's documented formula with
 * node:crypto, plus one literal vector per provider computed once outside Node (python3
 * hashlib/hmac and `openssl dgst`) and pasted:
 *  - Midtrans notification signature_key = SHA-512 hex(order_id + status_code + gross_amount +
 *    server key), on the inputs of Midtrans' own documentation sample;
 *  - Xendit: Basic auth = base64(secret key + ":") (the Xendit API reference's own example key
 *    and encoding) and callbacks carry x-callback-token = the verification token;
 *  - Tripay: request signature = HMAC-SHA256 hex(merchant code + merchant_ref + amount, private
 *    key), callback X-Callback-Signature = HMAC-SHA256 hex(raw body, private key).
 * Also: which adapter recognises which delivery (no overlap, the sandbox included).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { config } from '../../../shared/config.js';
import { detectProvider, GatewayError, type GatewayAdapter, type InboundDelivery } from '../../../shared/payments/gateways/index.js';
import { midtransAdapter, midtransAmount, midtransSignature } from '../../../shared/payments/gateways/midtrans.js';
import { sandboxAdapter, sandboxSignature } from '../../../shared/payments/gateways/sandbox.js';
import { tripayAdapter, tripayCallbackSignature, tripayRequestSignature } from '../../../shared/payments/gateways/tripay.js';
import { xenditAdapter } from '../../../shared/payments/gateways/xendit.js';
import { FakeXendit } from '../../helpers/fake-gateways.js';

/** A delivery as the webhook route hands it to the adapters (lower-cased header names). */
function delivery(rawBody: string, headers: Record<string, string> = {}): InboundDelivery {
  let json: unknown;
  try {
    json = JSON.parse(rawBody) as unknown;
  } catch {
    json = null;
  }
  return { headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), rawBody, json };
}

const sha512 = (s: string) => createHash('sha512').update(s, 'utf8').digest('hex');
const hmac256 = (key: string, s: string) => createHmac('sha256', key).update(s, 'utf8').digest('hex');

describe('gateway signatures and callback parsing (decision D5)', () => {
  let saved: typeof config.gateways;

  beforeEach(() => {
    saved = structuredClone(config.gateways);
  });

  afterEach(() => {
    Object.assign(config.gateways.midtrans, saved.midtrans);
    Object.assign(config.gateways.xendit, saved.xendit);
    Object.assign(config.gateways.tripay, saved.tripay);
    config.gateways.httpTimeoutMs = saved.httpTimeoutMs;
    config.gateways.sandboxSecret = saved.sandboxSecret;
    expect(config.gateways).to.deep.equal(saved);
  });

  describe('Midtrans: signature_key = SHA-512(order_id + status_code + gross_amount + server key)', () => {
    const DOC_KEY = 'askvnoibnosifnboseofinbofinfgbiufglnbfg';
    /** python3 hashlib.sha512 and `openssl dgst -sha512` of "1111" "200" "100000.00" + the docs' server key. */
    const DOC_VECTOR = 'edc076b21793ebe3e17926350f5b8ae67d902fe657b3d0aa31b932d5c127e2375d308a2bc94f3265ac2d80a1f181a79b997ac178a236fcff35af263fc4d4c231';

    function notification(fields: Record<string, string>): InboundDelivery {
      return delivery(JSON.stringify({ transaction_status: 'settlement', fraud_status: 'accept', payment_type: 'qris', ...fields }));
    }

    it('matches the literal vector of the documentation sample', () => {
      expect(midtransSignature('1111', '200', '100000.00', DOC_KEY)).to.equal(DOC_VECTOR);
      config.gateways.midtrans.serverKey = DOC_KEY;
      expect(midtransAdapter.verify(notification({ order_id: '1111', status_code: '200', gross_amount: '100000.00', signature_key: DOC_VECTOR }))).to.equal(true);
    });

    it('verifies signatures computed from the formula and refuses every altered field, key or shape', () => {
      const key = `SB-Mid-server-${randomBytes(8).toString('hex')}`;
      config.gateways.midtrans.serverKey = key;
      for (const [order, code, gross] of [
        ['ESC-MABC-1', '200', '151050.00'],
        ['ESC-MABC-2', '201', '10000.00'],
        ['ESC-MABC-3', '407', '500000000.00'],
        ['order-with spaces & ünïcode', '202', '99999.00'],
      ] as const) {
        const sig = sha512(order + code + gross + key);
        expect(midtransSignature(order, code, gross, key)).to.equal(sig);
        const ok = { order_id: order, status_code: code, gross_amount: gross, signature_key: sig };
        expect(midtransAdapter.verify(notification(ok)), order).to.equal(true);
        expect(midtransAdapter.verify(notification({ ...ok, order_id: `${order}x` }))).to.equal(false);
        expect(midtransAdapter.verify(notification({ ...ok, status_code: code === '200' ? '201' : '200' }))).to.equal(false);
        expect(midtransAdapter.verify(notification({ ...ok, gross_amount: gross.replace('.00', '') }))).to.equal(false);
        expect(midtransAdapter.verify(notification({ ...ok, signature_key: sha512(order + code + gross + 'another-key') }))).to.equal(false);
        expect(midtransAdapter.verify(notification({ ...ok, signature_key: sig.slice(0, 127) }))).to.equal(false);
        expect(midtransAdapter.verify(notification({ ...ok, signature_key: '' }))).to.equal(false);
      }
      // gross_amount sent as a number is not what Midtrans signs: refused.
      const sig = sha512('ESC-1' + '200' + '151050' + key);
      expect(midtransAdapter.verify(delivery(JSON.stringify({ order_id: 'ESC-1', status_code: '200', gross_amount: 151050, transaction_status: 'settlement', signature_key: sig })))).to.equal(false);
      // No server key configured: nothing verifies.
      config.gateways.midtrans.serverKey = '';
      expect(midtransAdapter.verify(notification({ order_id: 'ESC-1', status_code: '200', gross_amount: '1.00', signature_key: sha512('ESC-1' + '200' + '1.00') }))).to.equal(false);
    });

    it('parses gross_amount "151050.00" to 151050 whole rupiah and maps transaction_status', () => {
      expect(midtransAmount('151050.00')).to.equal(151050);
      expect(midtransAmount('151050')).to.equal(151050);
      expect(midtransAmount('151050.0')).to.equal(151050);
      for (const bad of ['151050.50', '151,050.00', '-1.00', '', '1e5', null, undefined]) expect(midtransAmount(bad), String(bad)).to.equal(undefined);
      const cases: [string, string | undefined, string][] = [
        ['settlement', 'accept', 'paid'],
        ['capture', 'accept', 'paid'],
        ['capture', undefined, 'paid'],
        ['capture', 'challenge', 'pending'],
        ['pending', 'accept', 'pending'],
        ['expire', 'accept', 'expired'],
        ['deny', 'deny', 'failed'],
        ['cancel', 'accept', 'failed'],
        ['failure', 'accept', 'failed'],
      ];
      for (const [transactionStatus, fraud, expected] of cases) {
        const parsed = midtransAdapter.parse(
          delivery(JSON.stringify({ order_id: 'ESC-1', status_code: '200', gross_amount: '151050.00', transaction_status: transactionStatus, fraud_status: fraud, signature_key: 'x' })),
        );
        expect(parsed, transactionStatus).to.deep.equal({ gatewayOrderId: 'ESC-1', status: expected, amount: 151050, eventId: null });
      }
      for (const body of [
        { order_id: 'ESC-1', status_code: '200', gross_amount: '151050.00', transaction_status: 'refund' },
        { order_id: 'ESC-1', status_code: '200', gross_amount: '151050.50', transaction_status: 'settlement' },
        { status_code: '200', gross_amount: '151050.00', transaction_status: 'settlement' },
      ]) {
        expect(() => midtransAdapter.parse(delivery(JSON.stringify(body))), JSON.stringify(body)).to.throw();
      }
    });
  });

  describe('Xendit: Basic auth with the secret key, callbacks with x-callback-token', () => {
    /** The Xendit API reference's example key and its documented encoding (re-checked with python3 base64). */
    const DOC_KEY = 'xnd_development_P4qDfOss0OCpl8RtKrROHjaQYNCk9dN5lSfk+R1l9Wbe+rSiCwZ3jw==';
    const DOC_BASIC = 'eG5kX2RldmVsb3BtZW50X1A0cURmT3NzME9DcGw4UnRLclJPSGphUVlOQ2s5ZE41bFNmaytSMWw5V2JlK3JTaUN3WjNqdz09Og==';

    it('sends Authorization: Basic base64(secret key + ":"), the documented literal for the docs example key', async () => {
      const fake = await new FakeXendit().start();
      try {
        config.gateways.xendit.secretKey = DOC_KEY;
        // The fake only knows its own key, so it answers 401; what matters is the header it received.
        const err = await xenditAdapter.queryStatus('ESC-DOC').then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(GatewayError);
        expect((err as GatewayError).message).to.equal('Xendit answered HTTP 401');
        expect(fake.requests[0]!.headers.authorization).to.equal(`Basic ${DOC_BASIC}`);
        expect(Buffer.from(`${DOC_KEY}:`).toString('base64')).to.equal(DOC_BASIC);
      } finally {
        await fake.stop();
      }
    });

    it('verifies the token exactly (length, case, content) and refuses when no token is configured', () => {
      const token = randomBytes(24).toString('base64url');
      config.gateways.xendit.callbackToken = token;
      const body = JSON.stringify({ id: 'inv1', external_id: 'ESC-1', status: 'PAID', amount: 151050, paid_amount: 151050 });
      expect(xenditAdapter.verify(delivery(body, { 'x-callback-token': token }))).to.equal(true);
      for (const wrong of [token.slice(0, -1), `${token}a`, token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase(), '', 'x'.repeat(token.length)]) {
        expect(xenditAdapter.verify(delivery(body, { 'x-callback-token': wrong })), wrong).to.equal(false);
      }
      config.gateways.xendit.callbackToken = '';
      expect(xenditAdapter.verify(delivery(body, { 'x-callback-token': '' }))).to.equal(false);
    });

    it('parses invoice callbacks: PAID/SETTLED -> paid with paid_amount, EXPIRED -> expired; others refused', () => {
      const base = { id: '579c8d61f23fa4ca35e52da4', external_id: 'ESC-1', user_id: 'u', merchant_name: 'm', amount: 151050, currency: 'IDR' };
      const parse = (b: unknown) => xenditAdapter.parse(delivery(JSON.stringify(b), { 'x-callback-token': 't' }));
      expect(parse({ ...base, status: 'PAID', paid_amount: 151050 })).to.deep.equal({ gatewayOrderId: 'ESC-1', status: 'paid', amount: 151050, eventId: null });
      expect(parse({ ...base, status: 'SETTLED', paid_amount: 151050 })).to.deep.equal({ gatewayOrderId: 'ESC-1', status: 'paid', amount: 151050, eventId: null });
      expect(parse({ ...base, status: 'PAID', paid_amount: 150000 }).amount).to.equal(150000);
      expect(parse({ ...base, status: 'PAID' }).amount).to.equal(151050);
      expect(parse({ ...base, status: 'EXPIRED' })).to.deep.equal({ gatewayOrderId: 'ESC-1', status: 'expired', amount: 151050, eventId: null });
      for (const bad of [{ ...base, status: 'VOIDED' }, { ...base, external_id: undefined, status: 'PAID' }, { ...base, id: undefined, status: 'PAID' }, { ...base, status: 'PAID', paid_amount: 1.5 }]) {
        expect(() => parse(bad), JSON.stringify(bad)).to.throw();
      }
    });
  });

  describe('Tripay: HMAC-SHA256 with the private key (requests: merchant code + merchant_ref + amount; callbacks: the raw body)', () => {
    /** python3 hmac and `openssl dgst -sha256 -hmac 'your-private-key'` of "T0001" "INV55567" "1500000". */
    const REQUEST_VECTOR = '76f51717c090f128cd7220d567881e604f19052c6f2f0647db46f6b9815a37a7';
    const CALLBACK_BODY =
      '{"reference":"T0001000000000000006","merchant_ref":"INV345675","payment_method":"BRIVA","payment_method_code":"BRIVA","total_amount":200000,"fee_merchant":2000,"fee_customer":0,"total_fee":2000,"amount_received":198000,"is_closed_payment":1,"status":"PAID","paid_at":1608133017,"note":null}';
    /** python3 hmac.new(b'your-private-key', CALLBACK_BODY, sha256). */
    const CALLBACK_VECTOR = '214df6e2dca1c8d51f95d77e10033624ee082aa81728b4c22619aec20fc0ad78';

    it('matches the literal vectors', () => {
      expect(tripayRequestSignature('INV55567', 1500000, { baseUrl: '', apiKey: 'k', privateKey: 'your-private-key', merchantCode: 'T0001' })).to.equal(REQUEST_VECTOR);
      expect(tripayCallbackSignature(CALLBACK_BODY, 'your-private-key')).to.equal(CALLBACK_VECTOR);
      config.gateways.tripay.privateKey = 'your-private-key';
      const d = delivery(CALLBACK_BODY, { 'X-Callback-Signature': CALLBACK_VECTOR, 'X-Callback-Event': 'payment_status' });
      expect(tripayAdapter.verify(d)).to.equal(true);
      expect(tripayAdapter.parse(d)).to.deep.equal({ gatewayOrderId: 'INV345675', status: 'paid', amount: 200000, eventId: null });
    });

    it('signs requests and verifies callbacks by the formula; refuses altered bodies, other keys and malformed signatures', () => {
      const key = `${randomBytes(5).toString('hex')}-${randomBytes(5).toString('hex')}`;
      Object.assign(config.gateways.tripay, { privateKey: key, merchantCode: 'T12345', apiKey: 'DEV-x' });
      for (const [ref, amount] of [
        ['ESC-MABC-1', 151050],
        ['ESC-MABC-2', 10000],
        ['ESC-MABC-3', 500_000_000],
      ] as const) {
        expect(tripayRequestSignature(ref, amount)).to.equal(hmac256(key, `T12345${ref}${amount}`));
        const body = JSON.stringify({ reference: `DEV-${ref}`, merchant_ref: ref, total_amount: amount, fee_customer: 0, status: 'PAID' });
        const sig = hmac256(key, body);
        const headers = { 'X-Callback-Signature': sig, 'X-Callback-Event': 'payment_status' };
        expect(tripayAdapter.verify(delivery(body, headers)), ref).to.equal(true);
        // Re-serialised with a space: the same JSON value, not the same raw body.
        expect(tripayAdapter.verify(delivery(body.replace(':', ': '), headers))).to.equal(false);
        expect(tripayAdapter.verify(delivery(body.replace('PAID', 'PAYD'), headers))).to.equal(false);
        expect(tripayAdapter.verify(delivery(body, { ...headers, 'X-Callback-Signature': hmac256('other-key', body) }))).to.equal(false);
        expect(tripayAdapter.verify(delivery(body, { ...headers, 'X-Callback-Signature': sig.slice(0, 63) }))).to.equal(false);
        expect(tripayAdapter.verify(delivery(body, { ...headers, 'X-Callback-Signature': tripayRequestSignature(ref, amount) }))).to.equal(false);
      }
      config.gateways.tripay.privateKey = '';
      const body = '{"merchant_ref":"ESC-1","status":"PAID","total_amount":1}';
      expect(tripayAdapter.verify(delivery(body, { 'X-Callback-Signature': hmac256('', body) }))).to.equal(false);
    });

    it('parses callbacks: statuses, total_amount less fee_customer, and the payment_status event only', () => {
      const headers = { 'X-Callback-Signature': 'x', 'X-Callback-Event': 'payment_status' };
      const parse = (b: unknown, h: Record<string, string> = headers) => tripayAdapter.parse(delivery(JSON.stringify(b), h));
      const base = { reference: 'DEV-T1', merchant_ref: 'ESC-1', total_amount: 151050, fee_customer: 0 };
      expect(parse({ ...base, status: 'PAID' })).to.deep.equal({ gatewayOrderId: 'ESC-1', status: 'paid', amount: 151050, eventId: null });
      expect(parse({ ...base, status: 'EXPIRED' }).status).to.equal('expired');
      expect(parse({ ...base, status: 'FAILED' }).status).to.equal('failed');
      expect(parse({ ...base, status: 'UNPAID' }).status).to.equal('pending');
      expect(parse({ ...base, status: 'PAID', total_amount: 155300, fee_customer: 4250 }).amount).to.equal(151050);
      for (const [bad, h] of [
        [{ ...base, status: 'REFUND' }, headers],
        [{ ...base, status: 'PAID', total_amount: '151050' }, headers],
        [{ ...base, merchant_ref: undefined, status: 'PAID' }, headers],
        [{ ...base, status: 'PAID' }, { 'X-Callback-Signature': 'x' }],
        [{ ...base, status: 'PAID' }, { ...headers, 'X-Callback-Event': 'payment_refund' }],
      ] as const) {
        expect(() => parse(bad, h), JSON.stringify(bad)).to.throw();
      }
    });
  });

  describe('provider detection', () => {
    const ADAPTERS: GatewayAdapter[] = [sandboxAdapter, midtransAdapter, xenditAdapter, tripayAdapter];
    const sandboxBody = JSON.stringify({ provider: 'sandbox', gateway_order_id: 'ESC-1', status: 'paid', amount: 151050 });
    const midtransBody = JSON.stringify({ order_id: 'ESC-1', status_code: '200', gross_amount: '151050.00', transaction_status: 'settlement', signature_key: 'a'.repeat(128) });
    const xenditBody = JSON.stringify({ id: 'inv', external_id: 'ESC-1', status: 'PAID', amount: 151050 });
    const tripayBody = JSON.stringify({ reference: 'DEV-1', merchant_ref: 'ESC-1', status: 'PAID', total_amount: 151050 });
    const cases: [string, InboundDelivery, string | null][] = [
      ['sandbox', delivery(sandboxBody, { 'X-Sandbox-Signature': sandboxSignature(sandboxBody) }), 'sandbox'],
      ['midtrans', delivery(midtransBody), 'midtrans'],
      ['xendit', delivery(xenditBody, { 'x-callback-token': 't' }), 'xendit'],
      ['tripay', delivery(tripayBody, { 'X-Callback-Signature': 'a'.repeat(64), 'X-Callback-Event': 'payment_status' }), 'tripay'],
      // A Midtrans-shaped body under another provider's header is not Midtrans.
      ['midtrans body + sandbox header', delivery(midtransBody, { 'X-Sandbox-Signature': 'a'.repeat(64) }), 'sandbox'],
      ['midtrans body + xendit token', delivery(midtransBody, { 'x-callback-token': 't' }), 'xendit'],
      ['tripay signature + sandbox header', delivery(tripayBody, { 'X-Callback-Signature': 'a', 'X-Sandbox-Signature': 'b' }), 'sandbox'],
      ['tripay signature + xendit token', delivery(tripayBody, { 'X-Callback-Signature': 'a', 'x-callback-token': 't' }), 'xendit'],
      ['xendit token + sandbox header', delivery(xenditBody, { 'x-callback-token': 't', 'X-Sandbox-Signature': 'b' }), 'sandbox'],
      ['midtrans body without signature_key', delivery(JSON.stringify({ order_id: 'ESC-1', status_code: '200', transaction_status: 'settlement' })), null],
      ['nothing known', delivery(xenditBody), null],
    ];

    it('exactly one adapter recognises each delivery (by headers and payload shape), or none', () => {
      for (const [label, d, expected] of cases) {
        const names = ADAPTERS.filter((a) => a.recognises(d)).map((a) => a.name);
        expect(names, label).to.deep.equal(expected === null ? [] : [expected]);
      }
    });

    it('detectProvider picks only loaded adapters', () => {
      Object.assign(config.gateways.midtrans, { serverKey: 'k' });
      Object.assign(config.gateways.xendit, { secretKey: 'k', callbackToken: 't' });
      Object.assign(config.gateways.tripay, { apiKey: 'a', privateKey: 'p', merchantCode: 'T1' });
      expect(config.sandboxMode).to.equal(true);
      for (const [label, d, expected] of cases) expect(detectProvider(d)?.name ?? null, label).to.equal(expected);
      Object.assign(config.gateways.midtrans, { serverKey: '' });
      Object.assign(config.gateways.xendit, { callbackToken: '' });
      Object.assign(config.gateways.tripay, { merchantCode: '' });
      expect(detectProvider(cases[1]![1])).to.equal(undefined);
      expect(detectProvider(cases[2]![1])).to.equal(undefined);
      expect(detectProvider(cases[3]![1])).to.equal(undefined);
    });
  });
});

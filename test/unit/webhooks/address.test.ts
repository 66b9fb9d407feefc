/**
 * Which addresses a webhook may reach and which endpoint URLs are taken (decision 0020
 * "Webhooks", SSRF): every refused range, IPv6 forms that embed IPv4, loopback only in
 * sandbox mode, https outside it; and the Standard Webhooks signature against the package.
 */
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { addressAllowed, classifyAddress, urlProblem } from '../../../shared/webhooks/address.js';
import { newSecret, signature, signedHeaders } from '../../../shared/webhooks/signing.js';

describe('webhook addresses and URLs', () => {
  it('refuses private, loopback, link-local, CGNAT, unique-local, metadata and reserved addresses', () => {
    const privateOnes = [
      '0.0.0.0', '10.0.0.1', '10.255.255.255', '100.64.0.1', '100.100.100.200', '169.254.169.254', '169.254.0.1', '172.16.0.1', '172.31.255.255',
      '192.168.0.1', '192.0.0.192', '192.0.2.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
      '::', 'fd00:ec2::254', 'fc00::1', 'fe80::1', 'fec0::1', 'ff02::1', '2001:db8::1', '64:ff9b::a00:1', '2002:a00:1::', '2001:0:4136:e378::1', '100::1',
      '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', 'not-an-ip', '',
    ];
    for (const a of privateOnes) expect(classifyAddress(a), a).to.equal('private');
    for (const a of ['127.0.0.1', '127.10.20.30', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '[::1]']) expect(classifyAddress(a), a).to.equal('loopback');
    for (const a of ['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(classifyAddress(a), a).to.equal('public');
    expect(addressAllowed('127.0.0.1', true)).to.equal(true);
    expect(addressAllowed('127.0.0.1', false)).to.equal(false);
    expect(addressAllowed('10.0.0.1', true)).to.equal(false);
    expect(addressAllowed('8.8.8.8', false)).to.equal(true);
  });

  it('takes https URLs to public hosts; http and loopback only in sandbox mode; never private literals or credentials', () => {
    const ok = (url: string, sandbox: boolean) => expect(urlProblem(url, sandbox), `${url} sandbox=${sandbox}`).to.equal(null);
    const refused = (url: string, sandbox: boolean) => expect(urlProblem(url, sandbox), `${url} sandbox=${sandbox}`).to.be.a('string');
    for (const sandbox of [true, false]) {
      ok('https://hooks.example.com/in', sandbox);
      ok('https://8.8.8.8:8443/in', sandbox);
      for (const url of [
        'http://hooks.example.com/in', 'ftp://hooks.example.com/', 'https://u:p@hooks.example.com/', 'https://10.0.0.1/', 'https://0x0a.0.0.1/', 'https://169.254.169.254/',
        'https://[fd00:ec2::254]/', 'https://[::ffff:a9fe:a9fe]/', 'https://0/', 'not a url', 'http://192.168.1.1/',
      ]) refused(url, sandbox);
    }
    for (const url of ['http://127.0.0.1:3000/x', 'http://localhost:3000/x', 'http://api.localhost/x', 'https://127.0.0.1/x', 'http://[::1]:8080/x']) {
      ok(url, true);
      refused(url, false);
    }
    // The WHATWG parser's number forms are normalised first: 2130706433 is 127.0.0.1.
    refused('https://2130706433/', false);
  });

  it('signs exactly as the standardwebhooks package verifies', () => {
    const secret = newSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ id: 'msg_1', type: 'deal.created' });
    const now = Date.now();
    const headers = signedHeaders(secret, 'msg_1', body, now);
    expect(new Webhook(secret).verify(body, headers)).to.deep.equal({ id: 'msg_1', type: 'deal.created' });
    expect(headers['webhook-signature']).to.equal(new Webhook(secret).sign('msg_1', new Date(Math.floor(now / 1000) * 1000), body));
    expect(signature(secret, 'msg_1', 1, body)).to.not.equal(signature(secret, 'msg_2', 1, body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).to.throw();
  });
});

/** plainName (shared/mail/plain.ts; issue 42, decision 0017's addendum): a customer's name set into a platform e-mail reads as a name and nothing else. */
import { expect } from 'chai';
import { PLAIN_NAME_MAX, plainName } from '../../../shared/mail/plain.js';

describe('mail: plainName', () => {
  it('keeps ordinary company names as they are', () => {
    for (const name of ['Acme Logistik', 'PT. Maju Jaya', 'CV Sinar-Abadi & Co (Jakarta)', "O'Brien, Ltd.", 'Kopi Senja 2', 'Ünïcödé Çafé', 'Toko Bahagia.']) {
      expect(plainName(name)).to.equal(name);
    }
  });

  it('leaves no URL, host name or e-mail address for a mail client to link', () => {
    const cases: [string, string][] = [
      ['https://evil.example/login?x=1', 'https evil example login x 1'],
      ['www.bank-login.co.id', 'www bank-login co id'],
      ['pay@evil.com', 'pay evil com'],
      ['evil..com', 'evil com'],
      ['Ｅｖｉｌ．ｃｏｍ', 'Evil com'],
      ['evil\u2024com', 'evil com'],
      ['mailto:x@y.z', 'mailto x y z'],
    ];
    for (const [given, want] of cases) {
      const got = plainName(given);
      expect(got, given).to.equal(want);
      expect(got, given).to.not.match(/[@:/]|\.\S/);
    }
  });

  it('folds line breaks, control and format characters (bidi overrides, zero-width) into single spaces', () => {
    expect(plainName('Bank BCA\r\nBcc: x@evil.example')).to.equal('Bank BCA Bcc x evil example');
    expect(plainName('a\u202Egnp.exe\u200B\u0007b\tc')).to.equal('a gnp exe b c');
    expect(plainName(' \n\u0000 ')).to.equal('');
  });

  it(`clamps to ${PLAIN_NAME_MAX} characters (code points), without a trailing space`, () => {
    expect(Array.from(plainName('Z'.repeat(500)))).to.have.length(PLAIN_NAME_MAX);
    expect(Array.from(plainName('名'.repeat(100)))).to.have.length(PLAIN_NAME_MAX);
    expect(plainName(`${'a'.repeat(PLAIN_NAME_MAX - 1)} bcd`)).to.equal('a'.repeat(PLAIN_NAME_MAX - 1));
  });
});

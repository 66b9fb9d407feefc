/** Signed file links, checked against an HMAC computed here independently. */
import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { AppError } from '../../../shared/errors.js';
import { freshLinks, signLink, storedNameOf, verifyLink } from '../../../shared/uploads/links.js';

const codeOf = (fn: () => void): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof AppError ? err.code : 'OTHER';
  }
};

describe('uploads: signed links', () => {
  const name = `${randomUUID()}.jpg`;
  const user = randomUUID();

  it('sig is HMAC-SHA256 of "<name>.<exp>.<u>" with the link secret; exp is now + TTL', () => {
    clock.set(new Date('2026-11-26T00:00:00.000Z'));
    const url = new URL(signLink(name, user));
    const exp = url.searchParams.get('exp')!;
    expect(Number(exp)).to.equal(Date.parse('2026-11-26T00:00:00.000Z') / 1000 + config.uploads.linkTtlSeconds);
    const expected = createHmac('sha256', config.uploads.linkSecret).update(`${name}.${exp}.${user}`).digest('hex');
    expect(url.searchParams.get('sig')).to.equal(expected);
    expect(url.searchParams.get('u')).to.equal(user);
    const q = Object.fromEntries(url.searchParams);
    expect(codeOf(() => verifyLink(name, q, user))).to.equal(null);
    expect(codeOf(() => verifyLink(name, q, randomUUID()))).to.equal('LINK_NOT_YOURS');
    expect(codeOf(() => verifyLink(name, { ...q, exp: String(Number(exp) + 1) }, user))).to.equal('LINK_INVALID');
    expect(codeOf(() => verifyLink(name, { ...q, sig: ['a', 'b'] }, user))).to.equal('LINK_INVALID');
    clock.advance(config.uploads.linkTtlSeconds * 1000);
    expect(codeOf(() => verifyLink(name, q, user))).to.equal('LINK_EXPIRED');
  });

  it('references: our links and bare upload ids resolve to the stored name; others do not', () => {
    expect(storedNameOf(signLink(name, user))).to.equal(name);
    expect(storedNameOf(name)).to.equal(name);
    expect(storedNameOf(`https://files.example.com/v1/upload/files/${name}`)).to.equal(null);
    expect(storedNameOf(`${config.publicBaseUrl}/v1/upload/files/${name.replace('.jpg', '.exe')}`)).to.equal(null);
    const [ours, theirs] = freshLinks([signLink(name, user), 'https://files.example.com/a.jpg'], 'reader');
    expect(new URL(ours!).searchParams.get('u')).to.equal('reader');
    expect(theirs).to.equal('https://files.example.com/a.jpg');
  });
});

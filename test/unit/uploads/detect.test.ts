/**
 * The polyglot scan and the declared-type check, without the API: foreign signatures are
 * found anywhere in the buffer, and random (compressed-looking) data does not trip them.
 * And the kinds each purpose allows, as the sanitiser applies them.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import sharp from 'sharp';
import { declaredMatches, extensionOf, foreignSignature } from '../../../shared/uploads/sanitise/detect.js';
import { sanitise } from '../../../shared/uploads/sanitise/index.js';
import * as H from '../../helpers/hostile-files.js';

describe('uploads: type detection and the polyglot scan', () => {
  it('finds PDF, ZIP, HTML, script, PHP and SVG payloads anywhere in an image', async () => {
    const jpeg = await H.photo('jpeg');
    const mid = (payload: string) => Buffer.concat([jpeg.subarray(0, 100), Buffer.from(payload, 'latin1'), jpeg.subarray(100)]);
    expect(foreignSignature(mid('%PDF-1.7'), 'jpeg')).to.equal('pdf');
    expect(foreignSignature(Buffer.concat([jpeg, H.zipArchive()]), 'jpeg')).to.equal('zip');
    for (const p of ['<HTML>', '<script src=x>', '<?php ', '<iframe ', '<!DOCTYPE html>', '<body onload=x>', 'javascript:alert(1)']) {
      expect(foreignSignature(mid(p), 'jpeg'), p).to.equal('html');
    }
    expect(foreignSignature(mid('<svg xmlns="x" onload="alert(1)">'), 'png')).to.equal('svg');
    expect(foreignSignature(mid('<svg></svg>'), 'webp')).to.equal('svg');
  });

  it('a PDF may start with %PDF- and hold JPEG images; a ZIP inside it is still found', async () => {
    const pdf = await H.plainPdf();
    expect(foreignSignature(pdf, 'pdf')).to.equal(null);
    expect(foreignSignature(Buffer.concat([pdf, H.zipArchive()]), 'pdf')).to.equal('zip');
  });

  it('no false positive on 64 MB of random bytes (compressed image data looks random); lone ZIP headers or a bare <svg do not count', () => {
    for (let i = 0; i < 8; i++) expect(foreignSignature(randomBytes(8 * 1024 * 1024), 'jpeg')).to.equal(null);
    expect(foreignSignature(Buffer.from('xxPK\x03\x04yy', 'latin1'), 'png')).to.equal(null);
    expect(foreignSignature(Buffer.from('xx<svgyy', 'latin1'), 'png')).to.equal(null);
  });

  it('declared type and extension must both match the real type (jpg/jpeg and image/jpg aliases accepted)', () => {
    expect(declaredMatches('jpeg', 'image/jpeg', 'jpg')).to.equal(true);
    expect(declaredMatches('jpeg', 'image/jpg', 'JPEG')).to.equal(true);
    expect(declaredMatches('jpeg', 'image/png', 'jpg')).to.equal(false);
    expect(declaredMatches('png', 'image/png', 'jpg')).to.equal(false);
    expect(declaredMatches('pdf', 'application/pdf; charset=binary', 'pdf')).to.equal(true);
    expect(declaredMatches('pdf', 'application/octet-stream', 'pdf')).to.equal(false);
    expect(extensionOf('a.b.PNG')).to.equal('png');
    expect(extensionOf('noext')).to.equal('');
  });

  it('kyb (enterprise KYB documents) takes JPEG, PNG, WebP and PDF; a GIF or an HTML page is TYPE_NOT_ALLOWED (a PDF is too for kyc)', async () => {
    const input = (bytes: Buffer, declaredMime: string, declaredExt: string, purpose: 'kyb' | 'kyc' = 'kyb') => ({ bytes, purpose, declaredMime, declaredExt, pdfMaxPages: 100 });
    const pdf = await sanitise(input(await H.plainPdf(2), 'application/pdf', 'pdf'));
    expect(pdf).to.include({ ok: true, mime: 'application/pdf', ext: 'pdf' });
    for (const kind of ['jpeg', 'png', 'webp'] as const) {
      expect(await sanitise(input(await H.photo(kind), `image/${kind}`, kind)), kind).to.include({ ok: true, mime: `image/${kind}` });
    }
    const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).gif().toBuffer();
    expect(await sanitise(input(gif, 'image/gif', 'gif'))).to.deep.equal({ ok: false, code: 'TYPE_NOT_ALLOWED' });
    expect(await sanitise(input(Buffer.from('<html><script>alert(1)</script></html>'), 'application/pdf', 'pdf'))).to.deep.equal({ ok: false, code: 'TYPE_NOT_ALLOWED' });
    expect(await sanitise(input(await H.plainPdf(), 'application/pdf', 'pdf', 'kyc'))).to.deep.equal({ ok: false, code: 'TYPE_NOT_ALLOWED' });
  });
});

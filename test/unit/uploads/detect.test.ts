/**
 * The polyglot scan and the declared-type check, without the API: foreign signatures are
 * found anywhere in the buffer, and random (compressed-looking) data does not trip them.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { declaredMatches, extensionOf, foreignSignature } from '../../../shared/uploads/sanitise/detect.js';
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
});

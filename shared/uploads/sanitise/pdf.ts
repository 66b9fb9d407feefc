/**
 * PDFs: loaded with pdf-lib (encrypted, damaged, truncated, over the page limit or with an
 * unsupported stream encoding are refused), then every object is walked and active or
 * attached content is removed: JavaScript (name trees and actions), OpenAction and
 * additional actions (AA), Launch/ImportData/SubmitForm/remote actions, embedded files
 * (name tree, file specifications' EF, FileAttachment annotations, the file streams),
 * XFA forms, XMP metadata and the Info dictionary. The result is saved without object
 * streams, parsed again and walked again: anything active left is refused
 * (PDF_ACTIVE_CONTENT / PDF_EMBEDDED_FILE) rather than stored.
 */
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFRef,
  PDFStream,
  type PDFObject,
} from 'pdf-lib';
import { inflateSync } from 'node:zlib';

export type PdfOutcome =
  | { ok: true; bytes: Buffer; pages: number }
  | { ok: false; code: 'PDF_PASSWORD_PROTECTED' | 'PDF_DAMAGED' | 'PDF_TOO_MANY_PAGES' | 'PDF_UNSUPPORTED_ENCODING' | 'PDF_ACTIVE_CONTENT' | 'PDF_EMBEDDED_FILE' };

const N = (name: string) => PDFName.of(name);
/** Keys removed wherever they appear. */
const ACTIVE_KEYS = ['JS', 'JavaScript', 'AA', 'OpenAction'].map(N);
/** Embedded files and the keys that reach them (AF: associated files of PDF 2.0). */
const EMBEDDED_KEYS = ['EmbeddedFiles', 'EF', 'RichMediaContent', 'AF'].map(N);
/** Action types that run code, open other files or send data. */
const DANGEROUS_ACTIONS = new Set(['/JavaScript', '/Launch', '/ImportData', '/SubmitForm', '/GoToR', '/GoToE', '/Rendition', '/RichMediaExecute', '/Sound', '/Movie']);
const DANGEROUS_ANNOTS = new Set(['/FileAttachment', '/RichMedia', '/Screen', '/Movie', '/Sound']);

const nameOf = (dict: PDFDict, key: string): string | undefined => {
  const v = dict.get(N(key));
  return v instanceof PDFName ? v.asString() : undefined;
};
const dictOf = (obj: PDFObject | undefined): PDFDict | undefined => (obj instanceof PDFDict ? obj : obj instanceof PDFStream ? obj.dict : undefined);

export interface Finding {
  active: string[];
  embedded: string[];
}

/** Walks a PDF's objects (indirect and nested) and lists what is active or attached. Tests use it on the output. */
export function inspect(doc: PDFDocument): Finding {
  const found: Finding = { active: [], embedded: [] };
  const visit = (obj: PDFObject | undefined, depth: number): void => {
    if (depth > 64 || obj === undefined) return;
    if (obj instanceof PDFArray) {
      for (const item of obj.asArray()) visit(item, depth + 1);
      return;
    }
    const dict = dictOf(obj);
    if (!dict) return;
    for (const key of ACTIVE_KEYS) if (dict.has(key)) found.active.push(key.asString());
    for (const key of EMBEDDED_KEYS) if (dict.has(key)) found.embedded.push(key.asString());
    const s = nameOf(dict, 'S');
    if (s && DANGEROUS_ACTIONS.has(s)) found.active.push(`action ${s}`);
    const type = nameOf(dict, 'Type');
    if (type === '/EmbeddedFile') found.embedded.push('EmbeddedFile stream');
    const sub = nameOf(dict, 'Subtype');
    if (sub && DANGEROUS_ANNOTS.has(sub)) found.embedded.push(`annotation ${sub}`);
    if (dict.has(N('XFA'))) found.active.push('/XFA');
    for (const [, value] of dict.entries()) visit(value, depth + 1);
  };
  for (const [, obj] of doc.context.enumerateIndirectObjects()) visit(obj, 0);
  visit(doc.context.trailerInfo.Root, 0);
  return found;
}

function clean(doc: PDFDocument): void {
  const { context } = doc;
  const isDangerousAnnot = (item: PDFObject): boolean => {
    const d = dictOf(item instanceof PDFRef ? context.lookup(item) : item);
    const sub = d ? nameOf(d, 'Subtype') : undefined;
    return sub !== undefined && DANGEROUS_ANNOTS.has(sub);
  };
  const scrub = (obj: PDFObject | undefined, depth: number): void => {
    if (depth > 64 || obj === undefined) return;
    if (obj instanceof PDFArray) {
      for (const item of obj.asArray()) scrub(item, depth + 1);
      return;
    }
    const dict = dictOf(obj);
    if (!dict) return;
    for (const key of [...ACTIVE_KEYS, ...EMBEDDED_KEYS, N('XFA')]) dict.delete(key);
    const s = nameOf(dict, 'S');
    if (s && DANGEROUS_ACTIONS.has(s)) {
      // A dangerous action becomes an empty dictionary: viewers ignore it.
      for (const key of dict.keys()) dict.delete(key);
      return;
    }
    const annots = dict.get(N('Annots'));
    const list = annots instanceof PDFRef ? context.lookup(annots) : annots;
    if (list instanceof PDFArray) {
      for (let i = list.size() - 1; i >= 0; i--) if (isDangerousAnnot(list.get(i))) list.remove(i);
    }
    for (const [, value] of dict.entries()) if (!(value instanceof PDFRef)) scrub(value, depth + 1);
  };
  for (const [ref, obj] of context.enumerateIndirectObjects()) {
    const d = dictOf(obj);
    const type = d ? nameOf(d, 'Type') : undefined;
    const sub = d ? nameOf(d, 'Subtype') : undefined;
    const fileSpecWithFile = type === '/Filespec' && d !== undefined && d.has(N('EF'));
    if (type === '/EmbeddedFile' || fileSpecWithFile || (sub !== undefined && DANGEROUS_ANNOTS.has(sub))) {
      context.delete(ref);
      continue;
    }
    scrub(obj, 0);
  }
  doc.catalog.delete(N('Metadata'));
  context.trailerInfo.Info = undefined;
  dropUnreachable(doc);
}

/**
 * Deletes every object no longer reachable from the catalog: what the cleaning cut loose
 * (file specifications, script actions, the Info dictionary) is not written out at all.
 */
function dropUnreachable(doc: PDFDocument): void {
  const { context } = doc;
  const reached = new Set<string>();
  const stack: PDFObject[] = [];
  const root = context.trailerInfo.Root;
  if (root) stack.push(root);
  while (stack.length > 0) {
    const obj = stack.pop()!;
    if (obj instanceof PDFRef) {
      const tag = obj.toString();
      if (reached.has(tag)) continue;
      reached.add(tag);
      const target = context.lookup(obj);
      if (target) stack.push(target);
    } else if (obj instanceof PDFArray) {
      stack.push(...obj.asArray());
    } else {
      const dict = dictOf(obj);
      if (dict) for (const [, value] of dict.entries()) stack.push(value);
    }
  }
  for (const [ref] of context.enumerateIndirectObjects()) if (!reached.has(ref.toString())) context.delete(ref);
}

/** The tail a complete PDF ends with (a truncated upload loses it). */
function hasTrailer(bytes: Buffer): boolean {
  const tail = bytes.subarray(Math.max(0, bytes.length - 2048)).toString('latin1');
  return tail.includes('%%EOF') && tail.includes('startxref');
}

// pdf-lib's error classes are compiled to ES5 (instanceof does not hold): they are told apart by message.
const isEncrypted = (err: unknown) => err instanceof Error && /is encrypted/.test(err.message);
const isUnsupported = (err: unknown) => err instanceof Error && /stream encoding not supported/.test(err.message);

/** Filters pdf-lib decodes when it reads object and cross-reference streams. */
const DECODABLE = new Set(['FlateDecode', 'LZWDecode', 'ASCIIHexDecode', 'ASCII85Decode', 'RunLengthDecode', 'Fl', 'LZW', 'AHx', 'A85', 'RL']);

/**
 * An object or cross-reference stream with a filter pdf-lib cannot decode. With
 * `throwOnInvalidObject` pdf-lib reports such a stream only as an invalid object, so the
 * raw dictionaries are read to tell an unsupported encoding from damage.
 */
function hasUndecodableStructureStream(bytes: Buffer): boolean {
  const text = bytes.toString('latin1');
  for (const m of text.matchAll(/<<((?:(?!>>)[\s\S]){0,2000}?\/Type\s*\/(?:ObjStm|XRef)[\s\S]{0,2000}?)>>/g)) {
    const filter = /\/Filter\s*(\/[A-Za-z0-9]+|\[[^\]]*\])/.exec(m[1]!);
    if (!filter) continue;
    for (const name of filter[1]!.matchAll(/\/([A-Za-z0-9]+)/g)) if (!DECODABLE.has(name[1]!)) return true;
  }
  return false;
}

/** What the object and cross-reference streams of one PDF may inflate to, in total. */
export const MAX_STRUCTURE_BYTES = 32 * 1024 * 1024;

/**
 * pdf-lib inflates object and cross-reference streams in memory while it loads, and a
 * deflate stream expands up to about 1,000 times: a 10 MB upload could ask for 10 GB.
 * Each such stream is inflated here first with zlib's output cap; more than
 * MAX_STRUCTURE_BYTES in total is refused before pdf-lib sees the file.
 */
export function structureStreamsTooLarge(bytes: Buffer): boolean {
  const text = bytes.toString('latin1');
  let total = 0;
  for (const m of text.matchAll(/\/Type\s*\/(?:ObjStm|XRef)(?![A-Za-z0-9])/g)) {
    const at = text.indexOf('stream', m.index);
    if (at < 0) continue;
    let start = at + 'stream'.length;
    if (text[start] === '\r') start++;
    if (text[start] === '\n') start++;
    const end = text.indexOf('endstream', start);
    if (end < 0) continue;
    try {
      total += inflateSync(bytes.subarray(start, end), { maxOutputLength: MAX_STRUCTURE_BYTES - total + 1 }).length;
    } catch (err) {
      if (err instanceof RangeError) return true;
      continue; // not deflate, or damaged: pdf-lib decides
    }
    if (total > MAX_STRUCTURE_BYTES) return true;
  }
  return false;
}

async function load(bytes: Uint8Array): Promise<PDFDocument> {
  return PDFDocument.load(bytes, { throwOnInvalidObject: true, updateMetadata: false });
}

export async function sanitisePdf(bytes: Buffer, maxPages: number): Promise<PdfOutcome> {
  if (structureStreamsTooLarge(bytes)) return { ok: false, code: 'PDF_DAMAGED' };
  let doc: PDFDocument;
  try {
    doc = await load(bytes);
  } catch (err) {
    if (isEncrypted(err)) return { ok: false, code: 'PDF_PASSWORD_PROTECTED' };
    if (isUnsupported(err) || hasUndecodableStructureStream(bytes)) return { ok: false, code: 'PDF_UNSUPPORTED_ENCODING' };
    return { ok: false, code: 'PDF_DAMAGED' };
  }
  if (doc.isEncrypted || doc.context.trailerInfo.Encrypt) return { ok: false, code: 'PDF_PASSWORD_PROTECTED' };
  if (!hasTrailer(bytes)) return { ok: false, code: 'PDF_DAMAGED' };
  let pages: number;
  try {
    pages = doc.getPageCount();
  } catch {
    return { ok: false, code: 'PDF_DAMAGED' };
  }
  if (pages < 1) return { ok: false, code: 'PDF_DAMAGED' };
  if (pages > maxPages) return { ok: false, code: 'PDF_TOO_MANY_PAGES' };
  let out: Uint8Array;
  try {
    clean(doc);
    out = await doc.save({ useObjectStreams: false, updateFieldAppearances: false });
  } catch (err) {
    if (isUnsupported(err)) return { ok: false, code: 'PDF_UNSUPPORTED_ENCODING' };
    return { ok: false, code: 'PDF_DAMAGED' };
  }
  const refusal = await verifyClean(out);
  if (refusal) return { ok: false, code: refusal };
  return { ok: true, bytes: Buffer.from(out), pages };
}

/**
 * The proof step: parses `bytes` again and walks every object. Active content left is
 * PDF_ACTIVE_CONTENT, an attached file PDF_EMBEDDED_FILE, an unreadable result
 * PDF_DAMAGED; null when clean.
 */
export async function verifyClean(bytes: Uint8Array): Promise<'PDF_ACTIVE_CONTENT' | 'PDF_EMBEDDED_FILE' | 'PDF_DAMAGED' | null> {
  let again: PDFDocument;
  try {
    again = await load(bytes);
  } catch {
    return 'PDF_DAMAGED';
  }
  const left = inspect(again);
  if (left.active.length > 0) return 'PDF_ACTIVE_CONTENT';
  if (left.embedded.length > 0) return 'PDF_EMBEDDED_FILE';
  return null;
}

/**
 * What a document's `file_url` may be (enterprise spec 4.7): an https link to a file kept
 * elsewhere, or an upload in this service's store named the way the upload answer names
 * it (consumer spec 4.5): its `upload_id` (the stored name, e.g. `<uuid>.pdf`), its `url`
 * (`<PUBLIC_BASE_URL>/v1/upload/files/<name>?exp=..&u=..&sig=..`; the signature is not
 * needed and not kept), or the path `/v1/upload/files/<name>`. A stored upload is kept as
 * its unsigned address and answered as a link signed for the reader (`readableUrl`).
 */
import { config } from '../config.js';
import { FILE_PATH, STORED_NAME, freshLinks, isOurLink, storedNameOf } from '../uploads/links.js';

export type FileRef = { kind: 'upload'; name: string } | { kind: 'external'; url: string } | { kind: 'invalid'; reason: string };

export const FILE_URL_RULE = 'must be an https URL or an upload of this service (the upload_id or url the upload answered)';

/** The kind of file the value names, or why it names none. */
export function fileRefOf(value: string): FileRef {
  if (value.startsWith(FILE_PATH)) {
    const name = value.slice(FILE_PATH.length).split(/[?#]/)[0] ?? '';
    return STORED_NAME.test(name) ? { kind: 'upload', name } : { kind: 'invalid', reason: 'is not the address of an upload of this service' };
  }
  if (isOurLink(value)) {
    const name = storedNameOf(value);
    return name ? { kind: 'upload', name } : { kind: 'invalid', reason: 'is not the address of an upload of this service' };
  }
  if (!URL.canParse(value)) return { kind: 'invalid', reason: FILE_URL_RULE };
  const url = new URL(value);
  if (url.protocol !== 'https:' || url.hostname === '') return { kind: 'invalid', reason: FILE_URL_RULE };
  if (url.username !== '' || url.password !== '') return { kind: 'invalid', reason: 'must not carry a user name or password' };
  return { kind: 'external', url: value };
}

/** The unsigned address a stored upload is kept as. */
export const uploadAddress = (name: string): string => `${config.publicBaseUrl}${FILE_PATH}${name}`;

/** The link a reader is given: a stored upload signed for them (short-lived), any other link as kept. */
export const readableUrl = (fileUrl: string, readerId: string): string => freshLinks([fileUrl], readerId)[0] ?? fileUrl;

/**
 * The documents and notes error catalogue (enterprise spec 4.7, 7): each factory owns its
 * code, its kind (which owns the status) and its English and Indonesian text.
 */
import { errors, fail } from '../errors.js';
import { SECRET_MESSAGES, type SecretKind } from './secrets.js';

export const documentErrors = {
  documentNotFound: () => errors.notFound({ en: 'No document with this id in the workspace', id: 'Tidak ada dokumen dengan id ini di workspace' }),
  dealNotFound: () => errors.notFound({ en: 'No deal with this id in the workspace', id: 'Tidak ada transaksi dengan id ini di workspace' }),
  milestoneNotFound: () => errors.notFound({ en: 'No milestone with this id in the workspace', id: 'Tidak ada milestone dengan id ini di workspace' }),
  noteNotFound: () => errors.notFound({ en: 'No note with this id on the deal', id: 'Tidak ada catatan dengan id ini pada transaksi' }),
  /** Both deal_id and milestone_id were sent and the milestone is of another deal. */
  milestoneOfOtherDeal: () => errors.invalidField('milestone_id', 'is not a milestone of deal_id'),
  /** A file_url that is neither an https URL nor an upload of this service (the schema refuses these first). */
  invalidFileUrl: (reason: string) => errors.invalidField('file_url', reason),
  /** The caller's own upload, but of a kind a document does not take (identity or KYB files). */
  wrongUploadType: () => errors.invalidField('file_url', 'is an upload of a type a document cannot use; upload the file as type escrow'),
  /** An upload of someone else, or one already attached to an escrow, chat, dispute, KYB or another document. */
  fileNotOwned: () =>
    fail.badRequest('FILE_NOT_OWNED', {
      en: 'This upload is not yours, or it is already attached elsewhere; upload the file again',
      id: 'Unggahan ini bukan milik Anda, atau sudah dilampirkan di tempat lain; unggah ulang berkasnya',
    }),
  /** Evidence of an approved or released milestone is kept. */
  locked: () =>
    fail.conflict('LOCKED', {
      en: 'This document is evidence of an approved or released milestone and is kept',
      id: 'Dokumen ini adalah bukti milestone yang sudah disetujui atau dicairkan dan tetap disimpan',
    }),
  /** A document attached to a milestone whose current round already has an approval (issue 42): refused, not a restart of the round. */
  evidenceFrozen: () =>
    fail.conflict('LOCKED', {
      en: 'This milestone already has an approval in its current round, so its evidence is fixed; attach the document to the deal, or ask for a revision and submit the evidence again (a new round)',
      id: 'Milestone ini sudah mendapat persetujuan pada putaran ini, sehingga buktinya tetap; lampirkan dokumen ke transaksi, atau minta revisi lalu kirim bukti lagi (putaran baru)',
    }),
  /** A note that carries a bank account number, a password or a key (secrets.ts). */
  noteSecret: (kind: SecretKind) => errors.invalidField('body', SECRET_MESSAGES[kind]),
};

/**
 * The approvals error catalogue (enterprise spec 3 milestone table, 4.6, 7; D7 Decide). A
 * milestone not in evidence_submitted answers the deal moves' 409 CONCURRENT_MODIFICATION
 * (dealErrors.concurrent, through `transition`); the rest are here.
 */
import { errors, fail } from '../errors.js';

export const approvalErrors = {
  /** A malformed id, or a milestone of another workspace. */
  notFound: () =>
    errors.notFound({ en: 'No milestone with this id in the workspace', id: 'Tidak ada milestone dengan id ini di workspace' }),
  /** D7: the person who submitted the evidence cannot decide on it, whatever their role. */
  submitter: () =>
    errors.forbidden({
      en: 'You submitted the evidence of this milestone, so another member has to decide on it',
      id: 'Anda yang mengirim bukti milestone ini, jadi anggota lain yang harus memutuskannya',
    }),
  /** D7: one decision per person and round (approve, reject or revision); a decision is final once saved. */
  alreadyDecided: () =>
    fail.conflict('INVALID_STATE', {
      en: 'You already decided this round; a decision is final once saved',
      id: 'Anda sudah memutuskan putaran ini; keputusan bersifat final setelah disimpan',
    }),
};

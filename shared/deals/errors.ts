/**
 * The deals error catalogue (enterprise spec 4.4, 7; D7): one factory per situation, each
 * owning its code, its kind (which owns the status) and its English and Indonesian text.
 */
import { errors, fail } from '../errors.js';

export const dealErrors = {
  dealNotFound: () => errors.notFound({ en: 'No deal with this id in the workspace', id: 'Tidak ada transaksi dengan id ini di workspace' }),
  milestoneNotFound: () =>
    errors.notFound({ en: 'No milestone with this id on the deal', id: 'Tidak ada milestone dengan id ini pada transaksi' }),
  counterpartyNotFound: () =>
    errors.invalidBody({ formErrors: [], fieldErrors: { counterparty_id: ['is not a counterparty of this workspace'] } }),
  /** A field rule the body schema cannot see (fee allocation against percent, template totals). */
  invalidField: errors.invalidField,
  notDraft: () =>
    fail.conflict('INVALID_STATE', {
      en: 'Only a draft deal can be changed; its terms are fixed from activation on',
      id: 'Hanya transaksi draf yang dapat diubah; ketentuannya tetap sejak diaktifkan',
    }),
  milestoneNotDraft: () =>
    fail.conflict('INVALID_STATE', { en: 'Only a draft milestone can be changed', id: 'Hanya milestone draf yang dapat diubah' }),
  tooManyMilestones: (max: number) =>
    fail.conflict('INVALID_STATE', { en: `A deal has at most ${max} milestones`, id: `Satu transaksi paling banyak memiliki ${max} milestone` }),
  alreadyCancelled: () => fail.conflict('INVALID_STATE', { en: 'The deal is already cancelled', id: 'Transaksi sudah dibatalkan' }),
  notCancellable: () =>
    fail.conflict('NOT_CANCELLABLE', {
      en: 'Money is held for a milestone of this deal; open a dispute instead',
      id: 'Dana sudah ditahan untuk milestone transaksi ini; ajukan sengketa sebagai gantinya',
    }),
  cannotActivate: () =>
    fail.conflict('INVALID_STATE', { en: 'Only a draft deal can be activated', id: 'Hanya transaksi draf yang dapat diaktifkan' }),
  /** A milestone not in the move's from-state (section 3), or changed by another request meanwhile. */
  concurrent: () =>
    fail.conflict('CONCURRENT_MODIFICATION', {
      en: 'The milestone is not in a state that allows this, or changed meanwhile; reload it',
      id: 'Milestone tidak dalam status yang mengizinkan ini, atau baru saja berubah; muat ulang',
    }),
  liveFunding: () =>
    fail.forbidden('LIVE_FUNDING_IS_PLATFORM_CONFIRMED', {
      en: 'Funding of a live workspace is confirmed by the platform when the money arrives',
      id: 'Pendanaan workspace live dikonfirmasi oleh platform saat dana diterima',
    }),
  liveDealInSandbox: () =>
    fail.conflict('LIVE_DEAL_IN_SANDBOX', {
      en: 'This is a live deal; it cannot be funded with sandbox money',
      id: 'Ini transaksi live; tidak dapat didanai dengan dana sandbox',
    }),
  sandboxNotConfirmed: () =>
    fail.conflict('INVALID_STATE', {
      en: 'A sandbox deal is funded by the workspace itself; only live funding is confirmed by the operator',
      id: 'Transaksi sandbox didanai oleh workspace sendiri; hanya pendanaan live yang dikonfirmasi operator',
    }),
  overrideUnreachable: () =>
    fail.conflict('INVALID_STATE', {
      en: 'This split cannot be reached without changing shares of money already funded',
      id: 'Pembagian ini tidak dapat dicapai tanpa mengubah bagian dana yang sudah didanai',
    }),
  documentNotOfDeal: () =>
    errors.invalidBody({ formErrors: [], fieldErrors: { document_ids: ['must name documents of this deal'] } }),
};

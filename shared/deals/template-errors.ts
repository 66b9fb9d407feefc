/**
 * The deal template error catalogue (enterprise spec 4.3, 7 and 8; issue 26). The shared
 * codes (NOT_FOUND, INVALID_BODY) come from `errors` with the template wording; field
 * errors have joi's `{ formErrors, fieldErrors }` shape.
 */
import { errors, fail } from '../errors.js';

export const templateErrors = {
  notFound: () => errors.notFound({ en: 'No template with this id in the workspace', id: 'Tidak ada templat dengan id ini di workspace' }),
  limit: (max: number) =>
    fail.conflict('TEMPLATE_LIMIT', {
      en: `A workspace can have at most ${max} templates; delete one first`,
      id: `Satu workspace paling banyak memiliki ${max} templat; hapus salah satu terlebih dahulu`,
    }),
  busy: () =>
    fail.conflict('TEMPLATE_BUSY', {
      en: 'Another template of this workspace is being saved; try again in a moment',
      id: 'Templat lain di workspace ini sedang disimpan; coba lagi sebentar lagi',
    }),
  /** One field of the body is wrong (e.g. `total_amount` of a deal made from a template). */
  invalidField: errors.invalidField,
};

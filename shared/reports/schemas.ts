/** Queries of the report routes (enterprise spec 4.8): the range, and for the CSVs the export being fetched. */
import Joi from 'joi';

const day = Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/);

export interface RangeQuery {
  from?: string;
  to?: string;
}

export interface ExportQuery extends RangeQuery {
  export_id?: string;
}

export interface SummaryQuery extends RangeQuery {
  /** The currency of the money figures (default IDR): amounts of two currencies are never added (decision 0023). */
  currency?: string;
}

export const summary = Joi.object({
  from: day,
  to: day,
  currency: Joi.string().trim().uppercase().pattern(/^[A-Z]{3}$/).default('IDR').messages({ 'string.pattern.base': 'must be a three-letter currency code' }),
});

export const csvExport = Joi.object({ from: day, to: day, export_id: Joi.string().max(64) });

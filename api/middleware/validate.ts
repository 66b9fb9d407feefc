import type Joi from 'joi';
import { errors, type FlatDetails } from '../../shared/errors.js';
import type { Ctx, Middleware } from '../context.js';

export interface Schemas {
  body?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  params?: Joi.ObjectSchema;
}

const options: Joi.ValidationOptions = {
  abortEarly: false,
  stripUnknown: false,
  convert: true,
  errors: { wrap: { label: false } },
};

/** Joi's errors in the spec's `{ formErrors, fieldErrors }` shape. */
export function flatten(error: Joi.ValidationError): FlatDetails {
  const details: FlatDetails = { formErrors: [], fieldErrors: {} };
  for (const d of error.details) {
    const field = d.path.join('.');
    if (!field) details.formErrors.push(d.message);
    else (details.fieldErrors[field] ??= []).push(d.message);
  }
  return details;
}

type Result = { value: unknown; error?: Joi.ValidationError };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates body, query and route params. Bad bodies answer 400 INVALID_BODY, bad queries
 * 400 INVALID_QUERY, both with `details`. Validated (converted) values are read in the
 * handler with `bodyOf`, `queryOf` and `paramsOf`.
 */
export function validate(schemas: Schemas): Middleware {
  return async (ctx, next) => {
    if (schemas.body) {
      const raw: unknown = ctx.request.body ?? {};
      if (!isPlainObject(raw)) {
        throw errors.invalidBody({ formErrors: ['Request body must be a JSON object'], fieldErrors: {} });
      }
      const { value, error } = schemas.body.validate(raw, options) as Result;
      if (error) throw errors.invalidBody(flatten(error));
      ctx.state.input.body = value;
    }
    if (schemas.query) {
      const { value, error } = schemas.query.validate(ctx.query, options) as Result;
      if (error) throw errors.invalidQuery(flatten(error));
      ctx.state.input.query = value;
    }
    if (schemas.params) {
      const { value, error } = schemas.params.validate(ctx.params, options) as Result;
      if (error) throw errors.notFound();
      ctx.state.input.params = value;
    }
    await next();
  };
}

// The schema passed to validate() fixes the shape; these accessors name it for the handler.
export const bodyOf = <T>(ctx: Ctx): T => ctx.state.input.body as T;
export const queryOf = <T>(ctx: Ctx): T => ctx.state.input.query as T;
export const paramsOf = <T>(ctx: Ctx): T => ctx.state.input.params as T;

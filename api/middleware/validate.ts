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

/**
 * Collects messages per field. A Map, never a plain object: a field may be named
 * `constructor`, `toString` or `__proto__`, which a `{}` would find on its prototype.
 * The result is built with `Object.fromEntries` (own data properties only), so it
 * still serialises as a plain JSON object.
 */
class FieldErrors {
  private readonly byField = new Map<string, string[]>();
  readonly formErrors: string[] = [];

  add(field: string, message: string): void {
    if (!field) {
      this.formErrors.push(message);
      return;
    }
    const list = this.byField.get(field);
    if (list) list.push(message);
    else this.byField.set(field, [message]);
  }

  get count(): number {
    return this.byField.size + this.formErrors.length;
  }

  get empty(): boolean {
    return this.byField.size === 0 && this.formErrors.length === 0;
  }

  details(): FlatDetails {
    return { formErrors: this.formErrors, fieldErrors: Object.fromEntries(this.byField) };
  }
}

/** Joi's errors in the spec's `{ formErrors, fieldErrors }` shape. */
export function flatten(error: Joi.ValidationError): FlatDetails {
  const collected = new FieldErrors();
  for (const d of error.details) collected.add(d.path.join('.'), d.message);
  return collected.details();
}

/**
 * C0 control characters other than tab, newline and carriage return, and DEL. They have
 * no place in any text field (and Postgres refuses NUL in text outright).
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** An object or array met while walking a parsed body, with the way to it. */
export interface Container {
  value: object;
  key: string | number;
  parent: Container | null;
}

/**
 * The dotted path of `key` inside `container`, as joi names fields (array items by index).
 * Built only when needed: walking never makes path strings.
 */
export function pathOf(container: Container | null, key?: string | number): string {
  const keys: (string | number)[] = key === undefined ? [] : [key];
  for (let c = container; c?.parent; c = c.parent) keys.push(c.key);
  return keys.reverse().join('.');
}

/**
 * Calls `onChild` for every member of every object and array of a parsed JSON body or
 * query (own keys only, depth first) until it returns true. Iterative, and no work per
 * level beyond the value itself, so a body nested 100 000 levels deep costs its size.
 */
export function eachMember(
  root: unknown,
  onChild: (parent: Container, key: string | number, value: unknown) => boolean | void,
): void {
  if (typeof root !== 'object' || root === null) return;
  const pending: Container[] = [{ value: root, key: '', parent: null }];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (Array.isArray(node.value)) {
      const items = node.value as unknown[];
      for (let i = 0; i < items.length; i += 1) {
        const value = items[i];
        if (onChild(node, i, value) === true) return;
        if (typeof value === 'object' && value !== null) pending.push({ value, key: i, parent: node });
      }
      continue;
    }
    const record = node.value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (onChild(node, key, value) === true) return;
      if (typeof value === 'object' && value !== null) pending.push({ value, key, parent: node });
    }
  }
}

/** Enough to tell the caller what to fix; no more (each path costs its depth to build). */
const MAX_REPORTED = 10;

/**
 * Refuses control characters in every string of a parsed body or query (values and field
 * names, at any depth), naming each field by its dotted path.
 */
function controlCharacterErrors(input: unknown): FieldErrors {
  const found = new FieldErrors();
  eachMember(input, (parent, key, value) => {
    if (typeof key === 'string' && CONTROL_CHARACTER.test(key)) {
      const at = pathOf(parent);
      found.add(at, `field names${at ? ` in ${at}` : ''} must not contain control characters`);
    } else if (typeof value === 'string' && CONTROL_CHARACTER.test(value)) {
      const at = pathOf(parent, key);
      found.add(at, `${at} must not contain control characters`);
    }
    return found.count >= MAX_REPORTED;
  });
  return found;
}

type Result = { value: unknown; error?: Joi.ValidationError };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates body, query and route params. Bad bodies answer 400 INVALID_BODY, bad queries
 * 400 INVALID_QUERY, both with `details`; bad params 404. Before joi runs, any string (or
 * field name) holding a control character is refused, so no route can pass one on to Postgres.
 * Validated (converted) values are read in the handler with `bodyOf`, `queryOf` and `paramsOf`.
 */
export function validate(schemas: Schemas): Middleware {
  return async (ctx, next) => {
    if (schemas.body) {
      const raw: unknown = ctx.request.body ?? {};
      if (!isPlainObject(raw)) {
        throw errors.invalidBody({ formErrors: ['Request body must be a JSON object'], fieldErrors: {} });
      }
      const control = controlCharacterErrors(raw);
      if (!control.empty) throw errors.invalidBody(control.details());
      const { value, error } = schemas.body.validate(raw, options) as Result;
      if (error) throw errors.invalidBody(flatten(error));
      ctx.state.input.body = value;
    }
    if (schemas.query) {
      const control = controlCharacterErrors(ctx.query);
      if (!control.empty) throw errors.invalidQuery(control.details());
      const { value, error } = schemas.query.validate(ctx.query, options) as Result;
      if (error) throw errors.invalidQuery(flatten(error));
      ctx.state.input.query = value;
    }
    if (schemas.params) {
      // A path segment with a control character (`/%00/`) names nothing: 404, like any
      // other param that does not fit (found by the route fuzz test).
      for (const value of Object.values(ctx.params)) if (CONTROL_CHARACTER.test(value)) throw errors.notFound();
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

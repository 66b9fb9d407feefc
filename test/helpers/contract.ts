/**
 * The published contract, checked on every answer the suite receives (issue 45): each
 * supertest request is matched to its operation in docs/openapi.yaml, and the answer must be
 * one the document describes: its status listed, its media type listed, and a JSON body
 * valid against the status's schema (JSON Schema 2020-12, Ajv). Objects are closed: a member
 * the document does not describe fails, as a wrong type or a missing required member does.
 *
 * The hook is supertest's own `expect(fn)` (a custom assertion), added to every request
 * when it is sent: a test that receives an answer the document does not describe fails with
 * what differs. Requests to paths the document does not have (the tests of unknown routes)
 * are checked against the generic error envelope only.
 *
 * `CONTRACT_REPORT=<file>`: append each difference to that file (one JSON line) instead of
 * failing, to survey them all in one run.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import supertest from 'supertest';
import { parse } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const specFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'openapi.yaml');
const doc = parse(readFileSync(specFile, 'utf8')) as JsonObject;
const SPEC_ID = 'openapi.yaml';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Route {
  template: string;
  pattern: RegExp;
  literalSegments: number;
  item: JsonObject;
}

const routes: Route[] = Object.entries(doc.paths as JsonObject)
  .map(([template, item]) => ({
    template,
    pattern: new RegExp(`^${template.split('/').map((seg) => (/^\{[^}]+\}$/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`),
    literalSegments: template.split('/').filter((seg) => seg !== '' && !seg.startsWith('{')).length,
    item: item as JsonObject,
  }))
  // A literal segment wins over a parameter (`/api/escrows/stats` before `/api/escrows/{id}`).
  .sort((a, b) => b.literalSegments - a.literalSegments);

/** The document's node at a local `$ref` (`#/components/...`). */
function resolveRef(ref: string): Json {
  if (!ref.startsWith('#/')) throw new Error(`contract: only local $refs are supported, got ${ref}`);
  let node: Json = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = (node as JsonObject)[key]!;
    if (node === undefined) throw new Error(`contract: ${ref} does not resolve`);
  }
  return node;
}

function deref(node: Json): JsonObject {
  let out = node as JsonObject;
  while (typeof out.$ref === 'string') out = resolveRef(out.$ref) as JsonObject;
  return out;
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

// ------------------------------------------------------------------------------------------
// Closing the schemas: every object schema that lists its members gets
// `unevaluatedProperties: false` unless it says otherwise. A schema made of `allOf` members
// (an envelope and its data, an error and its extra members) is merged into one first, so a
// member described by one part is not refused by the other.

const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'] as const;
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const SCHEMA_ONES = ['items', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'] as const;

/** A copy of `schema` with local `$ref`s inlined (`seen`: the refs being inlined, to stop at a cycle). */
function inline(schema: Json, seen: readonly string[] = []): Json {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, seen));
  if (!isObject(schema)) return schema;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (seen.includes(ref)) return { $ref: `${SPEC_ID}${ref}` };
    const { $ref: _ref, ...rest } = schema;
    const target = inline(resolveRef(ref), [...seen, ref]);
    return Object.keys(rest).length === 0 ? target : { allOf: [target, inline(rest, seen)] };
  }
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((SCHEMA_MAPS as readonly string[]).includes(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v, seen)]));
    } else if ((SCHEMA_LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      out[key] = value.map((v) => inline(v, seen));
    } else if ((SCHEMA_ONES as readonly string[]).includes(key) && (isObject(value) || Array.isArray(value))) {
      out[key] = inline(value, seen);
    } else {
      out[key] = value;
    }
  }
  return out;
}

const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples']);

/**
 * `allOf` members merged into one schema where that is exact: properties by name (a member
 * described twice is itself merged), `required` united, annotations dropped, and any other
 * keyword taken from the one member that has it. Empty members (`data: {}` in an envelope)
 * add nothing. Members that disagree on another keyword are left as an `allOf`.
 */
function mergeAllOf(schema: JsonObject): JsonObject {
  const members = schema.allOf;
  if (!Array.isArray(members)) return schema;
  const { allOf: _allOf, ...own } = schema;
  const parts = [own, ...members.map((m) => mergeAllOf(m as JsonObject))].filter((p) => Object.keys(p).some((k) => !ANNOTATIONS.has(k)));
  if (parts.length === 1) return parts[0]!;
  const out: JsonObject = {};
  const properties: JsonObject = {};
  const required = new Set<string>();
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      if (ANNOTATIONS.has(key)) continue;
      if (key === 'properties' && isObject(value)) {
        for (const [name, sub] of Object.entries(value)) {
          properties[name] = name in properties ? mergeAllOf({ allOf: [properties[name]!, sub] }) : sub;
        }
      } else if (key === 'required' && Array.isArray(value)) {
        for (const name of value) if (typeof name === 'string') required.add(name);
      } else if (key in out && JSON.stringify(out[key]) !== JSON.stringify(value)) {
        return schema;
      } else {
        out[key] = value;
      }
    }
  }
  if (Object.keys(properties).length > 0) out.properties = properties;
  if (required.size > 0) out.required = [...required];
  return out;
}

/** `schema` (inlined) with its allOf members merged and every object that lists its members closed. */
function close(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(close);
  if (!isObject(schema)) return schema;
  const merged = mergeAllOf(schema);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(merged)) {
    if (value === undefined) continue;
    if ((SCHEMA_MAPS as readonly string[]).includes(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, close(v)]));
    } else if (key === 'allOf' && Array.isArray(value)) {
      out[key] = value; // not mergeable: left as written (and open)
    } else if ((SCHEMA_LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      out[key] = value.map(close);
    } else if ((SCHEMA_ONES as readonly string[]).includes(key) && (isObject(value) || Array.isArray(value))) {
      out[key] = close(value);
    } else {
      out[key] = value;
    }
  }
  const listsMembers = isObject(out.properties) && Object.keys(out.properties).length > 0;
  if (listsMembers && out.additionalProperties === undefined && out.unevaluatedProperties === undefined && out.patternProperties === undefined && !Array.isArray(out.allOf)) {
    out.unevaluatedProperties = false;
  }
  return out;
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
(addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema(doc, SPEC_ID);

const validators = new Map<string, ValidateFunction>();

function validatorFor(key: string, schema: Json): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(close(inline(schema)) as object);
    validators.set(key, validate);
  }
  return validate;
}

// ------------------------------------------------------------------------------------------

export interface Answer {
  method: string;
  url: string;
  status: number;
  contentType: string | undefined;
  body: unknown;
}

function mediaOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase();
}

/** `METHOD /template` of the documented operation a request reaches, or undefined. */
export function operationOf(method: string, url: string): string | undefined {
  const pathname = new URL(url, 'http://x').pathname;
  const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const route = routes.find((r) => r.pattern.test(pathname) && isObject(r.item[m]));
  return route ? `${m.toUpperCase()} ${route.template}` : undefined;
}

/** What in `answer` the document does not describe, or undefined when it does. */
export function contractDifference(answer: Answer): string | undefined {
  const pathname = new URL(answer.url, 'http://x').pathname;
  const method = answer.method.toLowerCase() === 'head' ? 'get' : answer.method.toLowerCase();
  const route = routes.find((r) => r.pattern.test(pathname) && isObject(r.item[method]));
  const where = `${answer.method.toUpperCase()} ${route?.template ?? pathname} → ${answer.status}`;
  const media = mediaOf(answer.contentType);
  if (!route) {
    // Not a documented operation (an unknown route, a method the path does not have): a
    // refusal is an error envelope. A success here is a route only a test mounts (the
    // probe routers; test/integration/docs/openapi.test.ts holds every real route documented).
    if (media !== 'application/json' || answer.status < 400) return undefined;
    const validate = validatorFor('ErrorEnvelope', { $ref: '#/components/schemas/ErrorEnvelope' });
    return validate(answer.body) ? undefined : `${where}: not an error envelope: ${ajv.errorsText(validate.errors)}`;
  }
  if (!(METHODS as readonly string[]).includes(method)) return undefined;
  const op = route.item[method] as JsonObject;
  const responses = (op.responses ?? {}) as JsonObject;
  const status = String(answer.status);
  const statusKey = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default' in responses ? 'default' : undefined;
  if (!statusKey) return `${where}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`;
  const response = deref(responses[statusKey]!);
  const content = response.content as JsonObject | undefined;
  if (answer.method.toLowerCase() === 'head' || answer.status === 204 || answer.status === 304) return undefined;
  if (!content) {
    return media === undefined || answer.body === '' ? undefined : `${where}: the document gives no body, the answer has ${media}`;
  }
  if (media === undefined) return `${where}: no Content-Type (documented: ${Object.keys(content).join(', ')})`;
  const mediaKey = Object.keys(content).find((k) => k.toLowerCase() === media) ?? Object.keys(content).find((k) => k === '*/*' || (k.endsWith('/*') && media.startsWith(k.slice(0, -1))));
  if (!mediaKey) return `${where}: media type ${media} is not documented (documented: ${Object.keys(content).join(', ')})`;
  if (media !== 'application/json') return undefined;
  const schema = (content[mediaKey] as JsonObject).schema;
  if (schema === undefined) return `${where}: the document gives no schema for ${media}`;
  const validate = validatorFor(`${route.template} ${method} ${statusKey} ${mediaKey}`, schema);
  if (validate(answer.body)) return undefined;
  const detail = (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.keyword === 'unevaluatedProperties' ? ` (${String((e.params as { unevaluatedProperty?: string }).unevaluatedProperty)})` : ''}`);
  return `${where}: ${detail.join('; ')}`;
}

/**
 * The operations whose success answer leaves `data` open (a schema that admits anything:
 * `{}`, or an object that lists no members), as `METHOD /path status`.
 */
export function openDataAnswers(): string[] {
  const open: string[] = [];
  for (const route of routes) {
    for (const method of METHODS) {
      const op = route.item[method];
      if (!isObject(op)) continue;
      for (const [status, response] of Object.entries((op.responses ?? {}) as JsonObject)) {
        if (!status.startsWith('2')) continue;
        const schema = (deref(response).content as JsonObject | undefined)?.['application/json'];
        if (!isObject(schema) || schema.schema === undefined) continue;
        const closed = close(inline(schema.schema)) as JsonObject;
        const data = (closed.properties as JsonObject | undefined)?.data;
        if (data !== undefined && isOpen(data)) open.push(`${method.toUpperCase()} ${route.template} ${status}`);
      }
    }
  }
  return open;
}

function isOpen(schema: Json): boolean {
  if (!isObject(schema)) return schema === true;
  const meaningful = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
  if (meaningful.length === 0) return true;
  if (meaningful.every((k) => k === 'type') && schema.type === 'object') return true;
  return false;
}

// ------------------------------------------------------------------------------------------
// The hook: every supertest request checks its answer against the document.

const report = process.env.CONTRACT_REPORT;
/** `CONTRACT_STATS=<file>`: append `METHOD /template status` per answer checked (coverage counts for docs/contract.md). */
const stats = process.env.CONTRACT_STATS;
const hooked = Symbol('contract');

interface SentTest {
  method: string;
  url: string;
  expect(check: (res: supertest.Response) => void): unknown;
  [hooked]?: boolean;
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return bytes.toString('utf8');
  }
}

type EndFn = (this: SentTest, fn?: unknown) => unknown;
const TestClass = (supertest as unknown as { Test: { prototype: { end: EndFn } } }).Test;
const end = TestClass.prototype.end;
TestClass.prototype.end = function (this: SentTest, fn?: unknown) {
  if (!this[hooked]) {
    this[hooked] = true;
    const { method, url } = this;
    this.expect((res) => {
      const contentType: string | undefined = res.headers['content-type'];
      // A test that reads the answer as bytes (`.buffer().parse(...)`) holds JSON as a Buffer.
      const body = Buffer.isBuffer(res.body) && mediaOf(contentType) === 'application/json' ? parseJson(res.body) : (res.body as unknown);
      const difference = contractDifference({ method, url, status: res.status, contentType, body });
      if (stats) appendFileSync(stats, `${operationOf(method, url) ?? '(no operation)'} ${res.status}\n`);
      if (!difference) return;
      if (report) {
        appendFileSync(report, `${JSON.stringify({ difference, body: res.body as unknown })}\n`);
        return;
      }
      throw new Error(`contract (docs/openapi.yaml): ${difference}`);
    });
  }
  return end.call(this, fn);
};

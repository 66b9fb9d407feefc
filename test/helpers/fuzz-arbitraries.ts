/**
 * fast-check arbitraries for the route-table fuzz test: JSON bodies written as raw text
 * (so `__proto__`, duplicate keys, `1e400` and deep nesting survive as sent), header
 * values, and spellings of a route's path. Field names and enum values come from
 * docs/openapi.yaml, so a documented field is tried without editing this file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { parse } from 'yaml';

export const PROTOTYPE_KEYS = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'prototype', 'isPrototypeOf', '__defineGetter__'];

// ---------------------------------------------------------------------------------------
// The dictionary: names and values the API documents.

interface Dictionary {
  fields: string[];
  enums: string[];
}

type Schema = Record<string, unknown>;

/** docs/openapi.yaml, parsed. */
const spec = parse(readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'openapi.yaml'), 'utf8')) as Schema;

function readDictionary(): Dictionary {
  const fields = new Set<string>();
  const enums = new Set<string>();
  const pending: unknown[] = [spec];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (Array.isArray(node)) {
      pending.push(...(node as unknown[]));
    } else if (typeof node === 'object' && node !== null) {
      const record = node as Record<string, unknown>;
      if (typeof record.properties === 'object' && record.properties !== null) {
        for (const name of Object.keys(record.properties)) fields.add(name);
      }
      if (record.in === 'query' && typeof record.name === 'string') fields.add(record.name);
      if (Array.isArray(record.enum)) for (const v of record.enum as unknown[]) if (typeof v === 'string') enums.add(v);
      pending.push(...Object.values(record));
    }
  }
  return { fields: [...fields].sort(), enums: [...enums].sort() };
}

export const dictionary = readDictionary();

// ---------------------------------------------------------------------------------------
// Strings.

const controlCharacter = fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c === 0x20 ? 0x7f : c));

/** Text with control characters mixed in (NUL most of all). */
const controlString = fc
  .array(fc.oneof(fc.constant('\u0000'), controlCharacter, fc.string({ maxLength: 4 })), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join(''));

/** Strings a JSON body may carry: documented values, the callers' own, any unicode, control characters, long ones. */
export function stringValue(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known, ...dictionary.enums, '', ' ', '123456', '000000', 'Sturdy9Password', 'a@b.co') },
    { weight: 1, arbitrary: fc.uuid().map((u) => u) },
    { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) }, // lone surrogates too
    { weight: 2, arbitrary: controlString },
    { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => 'x'.repeat(n)) },
    { weight: 1, arbitrary: fc.emailAddress() },
  );
}

// ---------------------------------------------------------------------------------------
// JSON text.

/** Number spellings JSON allows but JavaScript stores oddly (Infinity, lost precision, -0). */
const numberText = fc.oneof(
  { weight: 3, arbitrary: fc.integer().map(String) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '0.0', '9007199254740993', '-9223372036854775809', '1E+2', '4294967296', '2147483648', '0.1'),
  },
);

/** A key as JSON text: documented fields, prototype names (also spelled with escapes), anything. */
function keyText(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...dictionary.fields).map((k) => JSON.stringify(k)) },
    { weight: 2, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS).map((k) => JSON.stringify(k)) },
    { weight: 1, arbitrary: fc.constantFrom('"\\u005f_proto__"', '"__pro\\u0074o__"', '"constructor\\u0000"') },
    { weight: 2, arbitrary: stringValue(known).map((k) => JSON.stringify(k)) },
  );
}

/** Any JSON value as text (objects may repeat keys), at most a few levels deep. */
export function jsonText(known: string[]): fc.Arbitrary<string> {
  const { value } = fc.letrec<{ value: string }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 4, arbitrary: stringValue(known).map((s) => JSON.stringify(s)) },
      { weight: 2, arbitrary: numberText },
      { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null') },
      {
        weight: 2,
        arbitrary: fc
          .array(fc.tuple(keyText(known), tie('value')), { maxLength: 5 })
          .map((entries) => `{${entries.map(([k, v]) => `${k}:${v}`).join(',')}}`),
      },
      { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`) },
    ),
  }));
  return value;
}

/** A JSON object as text: mostly documented fields with plausible values, so handlers are reached. */
export function jsonObjectText(known: string[]): fc.Arbitrary<string> {
  const plausible = fc
    .subarray(dictionary.fields, { maxLength: 6 })
    .chain((fields) => fc.tuple(...fields.map((f) => fc.tuple(fc.constant(JSON.stringify(f)), fc.oneof(stringValue(known).map((s) => JSON.stringify(s)), jsonText(known))))))
    .map((entries) => `{${entries.map(([k, v]) => `${k}:${v}`).join(',')}}`);
  const anyObject = fc
    .array(fc.tuple(keyText(known), jsonText(known)), { maxLength: 8 })
    .map((entries) => `{${entries.map(([k, v]) => `${k}:${v}`).join(',')}}`);
  return fc.oneof(plausible, anyObject);
}

/** Follows `$ref: '#/components/...'` links. */
function resolve(schema: Schema): Schema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops += 1) {
    let target: unknown = spec;
    for (const part of current.$ref.replace(/^#\//, '').split('/')) target = (target as Schema | undefined)?.[part];
    current = (target as Schema | undefined) ?? {};
  }
  return current;
}

/** JSON text valid (mostly) for a documented schema, with the callers' own values where they fit. */
function fromSchema(raw: Schema, known: string[], depth = 0): fc.Arbitrary<string> {
  const schema = resolve(raw);
  const alternatives = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (Array.isArray(alternatives) && alternatives.length) return fc.oneof(...alternatives.map((a) => fromSchema(a, known, depth + 1)));
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...(schema.enum as unknown[])).map((v) => JSON.stringify(v));
  const types = ([] as unknown[]).concat(schema.type ?? []);
  if (types.length > 1) return fc.oneof(...types.map((type) => fromSchema({ ...schema, type }, known, depth)));
  switch (types[0]) {
    case 'object': {
      if (depth > 3) return fc.constant('{}');
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      const optional = Object.keys(properties).filter((k) => !required.has(k));
      return fc.subarray(optional).chain((chosen) => {
        const keys = [...required, ...chosen].filter((k) => properties[k]);
        return fc
          .tuple(...keys.map((k) => fromSchema(properties[k]!, known, depth + 1)))
          .map((values) => `{${keys.map((k, i) => `${JSON.stringify(k)}:${values[i]}`).join(',')}}`);
      });
    }
    case 'array':
      return fc.array(fromSchema((schema.items ?? {}) as Schema, known, depth + 1), { maxLength: 3 }).map((items) => `[${items.join(',')}]`);
    case 'boolean':
      return fc.boolean().map(String);
    case 'integer':
    case 'number':
      return fc.integer({ min: Number(schema.minimum ?? -1_000_000), max: Number(schema.maximum ?? 1_000_000_000) }).map(String);
    case 'null':
      return fc.constant('null');
    case 'string': {
      const options: fc.Arbitrary<string>[] = [];
      if (schema.format === 'email') options.push(fc.constantFrom(...known.filter((k) => k.includes('@')), 'nobody@example.com'), fc.emailAddress());
      else if (schema.format === 'uuid') options.push(fc.uuid());
      else if (typeof schema.pattern === 'string') options.push(fc.stringMatching(new RegExp(schema.pattern)));
      else {
        const min = Number(schema.minLength ?? 0);
        const max = Math.min(Number(schema.maxLength ?? 40), 40);
        options.push(fc.constantFrom(...known, 'Sturdy9Password', 'sari.w', 'Budi Santoso'), fc.string({ minLength: min, maxLength: Math.max(min, max) }));
      }
      if (Array.isArray(schema.examples) && schema.examples.length) options.push(fc.constantFrom(...(schema.examples as unknown[])).map(String));
      return fc.oneof(...options).map((v) => JSON.stringify(v));
    }
    default:
      return jsonText(known);
  }
}

/** The JSON request body docs/openapi.yaml documents for a route, or null. */
function documentedSchema(method: string, template: string): Schema | null {
  const openapiPath = template.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const operation = ((spec.paths as Schema | undefined)?.[openapiPath] as Schema | undefined)?.[method.toLowerCase()] as Schema | undefined;
  const requestBody = operation?.requestBody ? resolve(operation.requestBody as Schema) : undefined;
  const schema = ((requestBody?.content as Schema | undefined)?.['application/json'] as Schema | undefined)?.schema;
  return schema ? (schema as Schema) : null;
}

/**
 * Bodies shaped like the route's documented request body (so handlers are reached, not
 * only validation), sometimes with one extra member of any kind spliced in.
 */
function documentedBody(method: string, template: string, known: string[]): fc.Arbitrary<string> | null {
  const schema = documentedSchema(method, template);
  if (!schema) return null;
  const valid = fromSchema(schema, known);
  const spliced = fc.tuple(valid, keyText(known), jsonText(known)).map(([text, key, value]) =>
    text.startsWith('{') ? `{${key}:${value}${text === '{}' ? '' : ','}${text.slice(1)}` : text,
  );
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: spliced });
}

/** Nesting thousands of levels deep (well under 1 MiB), under a documented field or bare. */
const deepText = fc
  .tuple(fc.integer({ min: 50, max: 100_000 }), fc.constantFrom('[', '{"a":', '{"__proto__":'), fc.constantFrom(...dictionary.fields))
  .map(([depth, open, field]) => {
    const close = open === '[' ? ']' : '}';
    return `{${JSON.stringify(field)}:${open.repeat(depth)}1${close.repeat(depth)}}`;
  });

export interface FuzzBody {
  text: string | null;
  contentType: string | null;
  contentEncoding: string | null;
}

const contentTypes = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/json; charset=latin1',
      'application/json; charset=utf-16le',
      'application/json; charset=nope',
      'application/vnd.api+json',
      'application/merge-patch+json',
      'application/json-patch+json',
      'text/plain',
      'text/html',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=fuzz',
      'multipart/form-data',
      'application/octet-stream',
      '*/*',
      ';',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constant(null) },
);

/**
 * A request body for a route: shaped like its documented body, or JSON text of any shape,
 * sometimes malformed, empty or compressed, with a content type.
 */
export function bodyArbitrary(method: string, template: string, known: string[]): fc.Arbitrary<FuzzBody> {
  const documented = documentedBody(method, template, known);
  const text = fc.oneof(
    { weight: documented ? 10 : 1, arbitrary: documented ?? jsonObjectText(known) },
    { weight: 6, arbitrary: jsonObjectText(known) },
    { weight: 2, arbitrary: jsonText(known) },
    { weight: 1, arbitrary: deepText },
    // Malformed: a valid text cut short, or anything at all.
    { weight: 1, arbitrary: fc.tuple(jsonObjectText(known), fc.nat()).map(([t, n]) => t.slice(0, n % Math.max(1, t.length))) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constant(null) },
  );
  const encoding = fc.oneof(
    { weight: 12, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: fc.constant('gzip') },
    { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-fuzz', 'gzip, gzip', '') },
  );
  return fc.record({ text, contentType: contentTypes, contentEncoding: encoding });
}

/** The bytes to send: gzip-compressed when the generated encoding is gzip and `compress` says so. */
export function bodyBytes(body: FuzzBody, compress: boolean): Buffer | undefined {
  if (body.text === null) return undefined;
  const raw = Buffer.from(body.text, 'utf8');
  return body.contentEncoding === 'gzip' && compress ? gzipSync(raw) : raw;
}

// ---------------------------------------------------------------------------------------
// Headers.

/** Characters Node lets a header value carry (tab, printable ASCII, Latin-1). */
const headerCharacter = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constant('\t') },
);
const headerText = (maxLength: number) => fc.string({ unit: headerCharacter, maxLength });

const HEADER_NAMES = [
  'Authorization',
  'Cookie',
  'X-CSRF-Token',
  'Idempotency-Key',
  'X-Request-Id',
  'X-Forwarded-For',
  'X-Forwarded-Proto',
  'X-Forwarded-Host',
  'Origin',
  'Referer',
  'Accept',
  'Accept-Encoding',
  'Accept-Language',
  'X-Service-Lang',
  'User-Agent',
  'If-None-Match',
  'If-Modified-Since',
  'Range',
  'Host',
  'Content-Language',
  'Expect',
];

/** Values shaped for a header, and garbage. `cookieName` is the session cookie's name. */
function headerValue(name: string, cookieName: string, known: string[]): fc.Arbitrary<string> {
  const garbage = fc.oneof(headerText(40), fc.constantFrom('', ' ', 'null', 'undefined', '\t', ...PROTOTYPE_KEYS), fc.constant('x'.repeat(8000)));
  const shaped: Record<string, fc.Arbitrary<string>> = {
    Authorization: fc.oneof(
      fc.constantFrom('Bearer', 'Bearer ', 'bearer rpk_', 'Basic dXNlcjpwYXNz', 'Bearer rpe_x', 'Bearer  rpk_x  ', 'Bearer a b'),
      headerText(60).map((t) => `Bearer ${t}`),
      headerText(50).map((t) => `Bearer rpk_${t}`),
      fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((t) => `Bearer ${t}`),
    ),
    Cookie: fc.oneof(
      headerText(60).map((t) => `${cookieName}=${t}`),
      fc.constantFrom(`${cookieName}=`, `${cookieName}`, `${cookieName}=%`, `${cookieName}=%E0%A4%A`, `${cookieName}="quoted"`, `=;;=; ${cookieName}=a; ${cookieName}=b`, '__proto__=1; constructor=2'),
    ),
    'X-CSRF-Token': fc.oneof(headerText(40), fc.constantFrom(...known)),
    'Idempotency-Key': fc.oneof(fc.uuid(), fc.uuid().map((u) => u.toUpperCase()), headerText(40)),
    'X-Forwarded-For': fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('unknown', '1.2.3.4, 5.6.7.8', '::ffff:127.0.0.1', '999.1.1.1', ',,,')),
    Origin: fc.oneof(fc.constantFrom('null', 'http://127.0.0.1', 'https://evil.example', 'garbage', '', 'http://[::1', 'file://'), fc.webUrl()),
    'X-Service-Lang': fc.constantFrom('en', 'id', 'EN', 'fr', '', '*'),
    'Accept-Encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', '*;q=0', 'x'),
    Range: fc.constantFrom('bytes=0-0', 'bytes=-1', 'bytes=99999999-', 'bytes=a-b', 'lines=1-2'),
    Host: fc.constantFrom('127.0.0.1', 'evil.example', '', 'a:b:c', '[::1]:99999', 'localhost:0'),
    Expect: fc.constantFrom('100-continue', 'x'),
  };
  return shaped[name] ? fc.oneof({ weight: 3, arbitrary: shaped[name] }, { weight: 1, arbitrary: garbage }) : garbage;
}

/** A few extra headers (they may contradict the caller's own credentials). */
export function headersArbitrary(cookieName: string, known: string[]): fc.Arbitrary<[string, string][]> {
  const one = fc.constantFrom(...HEADER_NAMES).chain((name) => fc.tuple(fc.mixedCase(fc.constant(name)), headerValue(name, cookieName, known)));
  return fc.array(one, { maxLength: 4 });
}

// ---------------------------------------------------------------------------------------
// Paths.

const PATH_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/;

/** Percent-encodes every character a path segment must not carry raw (and any character when `all`). */
export function encodeSegment(text: string, all = false): string {
  let out = '';
  for (const ch of text) {
    if (!all && PATH_SAFE.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** What a path parameter may be replaced with (already encoded for the path). */
export function paramValue(knownIds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...knownIds) },
    { weight: 1, arbitrary: fc.constantFrom(...knownIds).map((id) => id.toUpperCase()) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS, '..', '.', '%2e%2e', '%00', '%2F', '%', '%zz', '0', '-1', '1e400', 'null', 'undefined', 'swagger-ui.css', 'SWAGGER-UI.CSS', '..%2F..%2Fpackage.json') },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map((s) => encodeSegment(s)) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')) },
    { weight: 1, arbitrary: fc.integer({ min: 300, max: 4000 }).map((n) => 'a'.repeat(n)) },
  );
}

/** Wildcard tails under a mounted app (the queue dashboard). */
const wildcardValue = fc.oneof(
  fc.constantFrom('', 'api/queues', 'api/redis/stats', 'static/x.js', 'queue/x', 'api/queues/constructor/pause', '..'),
  fc.array(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }).map((s) => encodeSegment(s)), { maxLength: 4 }).map((parts) => parts.join('/')),
);

type SegmentSpelling = 'as-is' | 'upper' | 'mixed' | 'encoded-letter';

/** How a static segment is spelled: as registered mostly, otherwise other case or a percent-encoded letter. */
function spellSegment(segment: string): fc.Arbitrary<string> {
  const how = fc.oneof(
    { weight: 5, arbitrary: fc.constant<SegmentSpelling>('as-is') },
    { weight: 3, arbitrary: fc.constantFrom<SegmentSpelling>('upper', 'mixed', 'encoded-letter') },
  );
  return fc.tuple(how, fc.array(fc.boolean(), { minLength: segment.length, maxLength: segment.length }), fc.nat()).map(([h, mask, n]) => {
    switch (h) {
      case 'as-is':
        return segment;
      case 'upper':
        return segment.toUpperCase();
      case 'mixed':
        return [...segment].map((c, i) => (mask[i] ? c.toUpperCase() : c.toLowerCase())).join('');
      case 'encoded-letter': {
        if (!segment) return segment;
        const i = n % segment.length;
        return `${segment.slice(0, i)}${encodeSegment(segment[i]!, true)}${segment.slice(i + 1)}`;
      }
    }
  });
}

export interface PathShape {
  /** 0: as registered; otherwise the kind of slash trouble. */
  slashes: 'none' | 'leading-double' | 'inner-double' | 'trailing' | 'dot-segment' | 'all';
  query: string;
}

const queryArbitrary = (known: string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant('') },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.tuple(fc.oneof(fc.constantFrom(...dictionary.fields, ...PROTOTYPE_KEYS, 'limit', 'cursor'), fc.string({ maxLength: 6 })), stringValue(known)), { minLength: 1, maxLength: 4 })
        .map((pairs) => `?${pairs.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v.slice(0, 200))}`).join('&')}`),
    },
    { weight: 1, arbitrary: fc.constantFrom('?', '?&&', '?a', '?a[b]=1', '?__proto__[x]=1', '?%', '?a=%00', '?a=1&a=2&a=3', `?${'a=1&'.repeat(500)}`) },
  );

/**
 * Spellings of a route's path: each static segment as registered or in another case or
 * with a percent-encoded letter; parameters replaced (`params`); doubled, trailing or dot
 * slashes; a query string.
 */
export function pathArbitrary(template: string, params: fc.Arbitrary<string>, known: string[]): fc.Arbitrary<string> {
  const segments = template.replace(/[{}]/g, '').split('/').slice(1);
  const segmentsAs = (respell: boolean) =>
    fc.tuple(
      ...segments.map((segment) => {
        if (segment.startsWith('*')) return wildcardValue;
        if (segment.startsWith(':')) return params;
        return respell ? spellSegment(segment) : fc.constant(segment);
      }),
    );
  const slashes = fc.oneof(
    { weight: 3, arbitrary: fc.constant<PathShape['slashes']>('none') },
    { weight: 2, arbitrary: fc.constantFrom<PathShape['slashes']>('leading-double', 'inner-double', 'trailing', 'dot-segment', 'all') },
  );
  // Half as registered (so the handler runs), half spelled some other way.
  const spelling = fc.oneof(
    fc.tuple(segmentsAs(false), fc.constant<PathShape['slashes']>('none')),
    fc.tuple(segmentsAs(true), slashes),
  );
  return fc.tuple(spelling, fc.nat(), queryArbitrary(known)).map(([[parts, shape], n, query]) => {
    const list = [...parts];
    const at = list.length ? n % list.length : 0;
    if (shape === 'inner-double' || shape === 'all') list.splice(at, 0, '');
    if (shape === 'dot-segment') list.splice(at, 0, n % 2 ? '.' : 'x/..');
    let p = `/${list.join('/')}`;
    if (shape === 'leading-double' || shape === 'all') p = `/${p}`;
    if (shape === 'trailing' || shape === 'all') p = `${p}/`;
    return `${p}${query}`;
  });
}

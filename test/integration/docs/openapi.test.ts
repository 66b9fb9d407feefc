import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'yaml';
import { routers } from '../../../api/app.js';
import { api } from '../../helpers/app.js';

/**
 * docs/openapi.yaml is the contract: it must describe every route the API registers and
 * no route that does not exist, and be a well-formed OpenAPI 3.1 document.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Operation {
  operationId?: string;
  parameters?: JsonObject[];
  responses?: Record<string, JsonObject>;
  security?: Record<string, string[]>[];
}
type PathItem = { parameters?: JsonObject[] } & Partial<Record<HttpMethod, Operation>>;
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, PathItem>;
  components: {
    securitySchemes: Record<string, JsonObject>;
    responses: Record<string, JsonObject>;
    examples: Record<string, { value: JsonObject }>;
  };
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

const specFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'openapi.yaml');
const source = readFileSync(specFile, 'utf8');
const doc = parse(source) as OpenApiDocument;
const docJson = doc as unknown as Json;

/** `METHOD /path/{param}` for every route the routers register (HEAD is implied by GET). */
function registeredRoutes(): Set<string> {
  const out = new Set<string>();
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use() middleware, not a route
      const route = typeof layer.path === 'string' ? layer.path.replace(/:(\w+)/g, '{$1}') : String(layer.path);
      for (const method of layer.methods) {
        if (method !== 'HEAD') out.add(`${method} ${route}`);
      }
    }
  }
  return out;
}

function operations(): { key: string; route: string; item: PathItem; op: Operation }[] {
  const out: { key: string; route: string; item: PathItem; op: Operation }[] = [];
  for (const [route, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (op) out.push({ key: `${method.toUpperCase()} ${route}`, route, item, op });
    }
  }
  return out;
}

function documentedRoutes(): Set<string> {
  return new Set(operations().map((o) => o.key));
}

/** Resolves a local JSON pointer (`#/a/b~1c`); undefined when it leads nowhere. */
function resolvePointer(ref: string): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: Json | undefined = docJson;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = Array.isArray(node) ? node[Number(part)] : node[part];
    if (node === undefined) return undefined;
  }
  return node;
}

/** Follows `$ref` chains. */
function deref(node: Json | undefined): Json | undefined {
  let current = node;
  for (let hops = 0; hops < 10; hops++) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return current;
    const ref = current.$ref;
    if (typeof ref !== 'string') return current;
    current = resolvePointer(ref);
  }
  return undefined;
}

function collectRefs(node: Json, at: string, out: { at: string; ref: string }[]): void {
  if (Array.isArray(node)) {
    node.forEach((child, i) => collectRefs(child, `${at}/${i}`, out));
  } else if (node !== null && typeof node === 'object') {
    for (const [key, child] of Object.entries(node)) {
      if (key === '$ref' && typeof child === 'string') out.push({ at, ref: child });
      else collectRefs(child, `${at}/${key}`, out);
    }
  }
}

describe('OpenAPI document (docs/openapi.yaml)', () => {
  describe('structure', () => {
    it('is an OpenAPI 3.1 document with a title and version', () => {
      expect(doc.openapi).to.be.a('string').and.match(/^3\.1\./);
      expect(doc.info.title).to.be.a('string').and.not.equal('');
      expect(doc.info.version).to.be.a('string').and.not.equal('');
    });

    it('gives every operation responses, including a success, and a unique operationId', () => {
      const problems: string[] = [];
      const ids = new Map<string, string>();
      for (const { key, op } of operations()) {
        const statuses = Object.keys(op.responses ?? {});
        if (statuses.length === 0) problems.push(`${key}: no responses`);
        else if (!statuses.some((s) => /^2\d\d$/.test(s))) problems.push(`${key}: no 2xx response`);
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const resolved = deref(response);
          if (resolved === null || typeof resolved !== 'object' || Array.isArray(resolved) || typeof resolved.description !== 'string') {
            problems.push(`${key} ${status}: response without a description`);
          }
        }
        if (!op.operationId) problems.push(`${key}: no operationId`);
        else if (ids.has(op.operationId)) problems.push(`${key}: operationId ${op.operationId} also used by ${ids.get(op.operationId)}`);
        else ids.set(op.operationId, key);
      }
      expect(problems).to.deep.equal([]);
    });

    it('resolves every $ref', () => {
      const refs: { at: string; ref: string }[] = [];
      collectRefs(docJson, '#', refs);
      expect(refs.length).to.be.greaterThan(0);
      const broken = refs.filter((r) => resolvePointer(r.ref) === undefined).map((r) => `${r.at}: ${r.ref}`);
      expect(broken).to.deep.equal([]);
    });

    it('declares every path parameter, as required', () => {
      const problems: string[] = [];
      for (const { key, route, item, op } of operations()) {
        const declared = [...(item.parameters ?? []), ...(op.parameters ?? [])]
          .map((p) => deref(p))
          .filter((p): p is JsonObject => p !== null && typeof p === 'object' && !Array.isArray(p) && p.in === 'path');
        for (const [, name] of route.matchAll(/\{(\w+)\}/g)) {
          const param = declared.find((p) => p.name === name);
          if (!param) problems.push(`${key}: {${name}} is not declared`);
          else if (param.required !== true) problems.push(`${key}: {${name}} is not required`);
        }
        for (const p of declared) {
          const name = typeof p.name === 'string' ? p.name : JSON.stringify(p.name);
          if (!route.includes(`{${name}}`)) problems.push(`${key}: declares path parameter ${name} not in the path`);
        }
      }
      expect(problems).to.deep.equal([]);
    });

    it('names only defined security schemes', () => {
      const schemes = Object.keys(doc.components.securitySchemes);
      expect(schemes).to.include.members(['session', 'personalKey', 'workspaceKey', 'queueDashboard']);
      const unknown: string[] = [];
      for (const { key, op } of operations()) {
        for (const requirement of op.security ?? []) {
          for (const name of Object.keys(requirement)) if (!schemes.includes(name)) unknown.push(`${key}: ${name}`);
        }
      }
      expect(unknown).to.deep.equal([]);
    });

    it('keeps the shared error responses and every error example in the envelope', () => {
      expect(doc.components.responses).to.include.keys(
        'InvalidBody',
        'InvalidQuery',
        'Unauthorized',
        'Forbidden',
        'NotFound',
        'PayloadTooLarge',
        'RateLimited',
        'InternalError',
      );
      const bad: string[] = [];
      for (const [name, example] of Object.entries(doc.components.examples)) {
        const value = example.value;
        if (value.success !== false) continue;
        const error = value.error;
        if (error === null || typeof error !== 'object' || Array.isArray(error) || typeof error.code !== 'string' || typeof error.message !== 'string') {
          bad.push(name);
        }
      }
      expect(bad).to.deep.equal([]);
    });
  });

  describe('routes', () => {
    // Both directions: a route the API registers must be described, and a described route
    // must exist (the document never promises an endpoint the router does not serve).
    it('describes every registered route', () => {
      const documented = documentedRoutes();
      const missing = [...registeredRoutes()].filter((r) => !documented.has(r)).sort();
      expect(missing, `registered but not in docs/openapi.yaml:\n  ${missing.join('\n  ')}`).to.deep.equal([]);
    });

    it('describes only registered routes', () => {
      const registered = registeredRoutes();
      const extra = [...documentedRoutes()].filter((r) => !registered.has(r)).sort();
      expect(extra, `in docs/openapi.yaml but not registered:\n  ${extra.join('\n  ')}`).to.deep.equal([]);
    });
  });

  describe('served', () => {
    it('answers GET /docs with the HTML reference page', async () => {
      const res = await api().get('/docs').expect(200);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(res.text).to.include('<html').and.include('/docs/openapi.yaml');
    });

    it('answers GET /docs/openapi.yaml with this document', async () => {
      const res = await api().get('/docs/openapi.yaml').buffer(true).expect(200);
      expect(res.headers['content-type']).to.match(/^application\/yaml/);
      expect(res.text).to.equal(source);
    });

    it('serves the page assets locally and 404s anything else', async () => {
      const css = await api().get('/docs/assets/swagger-ui.css').buffer(true).expect(200);
      expect(css.headers['content-type']).to.match(/^text\/css/);
      const missing = await api().get('/docs/assets/secrets.txt').expect(404);
      expect(missing.body).to.deep.include({ success: false });
      expect(missing.body.error.code).to.equal('NOT_FOUND');
    });
  });
});

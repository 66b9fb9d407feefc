import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errors } from '../../shared/errors.js';
import { createRouter } from '../context.js';
import { setHtmlSecurityHeaders } from '../middleware/security-headers.js';

/** The API reference: docs/openapi.yaml rendered by swagger-ui-dist (served locally, no CDN). */
export const docsRouter = createRouter();

const here = path.dirname(fileURLToPath(import.meta.url));
const specPath = path.resolve(here, '..', '..', '..', 'docs', 'openapi.yaml');
const fallbackSpecPath = path.resolve(here, '..', '..', 'docs', 'openapi.yaml');
const uiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
};

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Escrow API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/docs/openapi.yaml', dom_id: '#ui', deepLinking: true });</script>
</body></html>`;

async function readSpec(): Promise<string> {
  // From sources the spec is two levels up; from dist/ it is three.
  return readFile(fallbackSpecPath, 'utf8').catch(() => readFile(specPath, 'utf8'));
}

docsRouter.get('/docs', (ctx) => {
  setHtmlSecurityHeaders(ctx);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page;
});

docsRouter.get('/docs/openapi.yaml', async (ctx) => {
  ctx.type = 'application/yaml; charset=utf-8';
  ctx.body = await readSpec();
});

docsRouter.get('/docs/assets/:file', async (ctx) => {
  const file = ctx.params.file ?? '';
  const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
  if (!type) throw errors.notFound({ en: 'No such asset', id: 'Aset tidak ditemukan' });
  ctx.type = type;
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = await readFile(path.join(uiDir, file));
});

/**
 * Before any load: the servers of a pair answer alike. `/healthz` gives the same body on
 * the API and bare Koa; `GET /v1/auth/me` gives the API and the floor exactly the same
 * `data` for a spread of the seeded keys and for the session cookie, and 401 for a
 * well-formed key that matches nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import { call, dataOf, type JsonAnswer } from '../lib/http.js';
import { FRAME, HEALTHZ, ME, type Target } from './load.js';
import type { BenchSeed } from './seed.js';

const HEALTHZ_BODY = JSON.stringify({ success: true, data: { status: 'ok' } });

type MeData = { user?: Record<string, unknown> | null; csrf_token?: unknown };

function differingFields(a: unknown, b: unknown): string {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(x), ...Object.keys(y)])]
    .filter((k) => !isDeepStrictEqual(x[k], y[k]))
    .map((k) => `${k}: ${JSON.stringify(x[k])} vs ${JSON.stringify(y[k])}`)
    .join('; ');
}

export async function checkHealthz(t: Target): Promise<void> {
  const a = await call(`${t.base}${HEALTHZ}`);
  if (a.status !== 200 || a.text !== HEALTHZ_BODY) {
    throw new Error(`${t.label}: GET ${HEALTHZ} answered ${a.status} ${a.text.slice(0, 300)}, expected 200 ${HEALTHZ_BODY}`);
  }
}

const FRAME_BODY = JSON.stringify({ success: true, data: { user: null, csrf_token: null } });

/**
 * The frame figure's pair (issue 43): `GET /v1/auth/me` without credentials answers bare
 * Koa and the API the same body, and the API's answer shows the frame ran (its request id,
 * the security headers); a `/healthz` answered ahead of the frame would not do.
 */
export async function checkFrame(bare: Target, service: Target): Promise<void> {
  for (const t of [bare, service]) {
    const a = await call(`${t.base}${FRAME}`);
    if (a.status !== 200 || a.text !== FRAME_BODY) throw new Error(`${t.label}: GET ${FRAME} without credentials answered ${a.status} ${a.text.slice(0, 300)}, expected 200 ${FRAME_BODY}`);
    if (t === service) {
      const missing = ['x-request-id', 'x-content-type-options', 'cache-control'].filter((h) => !a.headers.get(h));
      if (missing.length > 0) throw new Error(`${t.label}: GET ${FRAME} answered without ${missing.join(', ')}: it did not go through the request frame`);
    }
  }
  console.log(`bench: ${FRAME} without credentials: bare Koa and the API answer the same body; the API's carries the frame's headers`);
}

/**
 * For a spread of the seeded keys, and the session: both servers answer 200 with the
 * expected user and exactly the same `data`; an unknown key gets 401 from both.
 */
export async function checkAuth(seed: BenchSeed, service: Target, floor: Target, cookieName: string): Promise<void> {
  const n = seed.keys.length;
  const sample = [...new Set([0, 1, 2, Math.floor(n / 3), Math.floor(n / 2), Math.floor((2 * n) / 3), n - 2, n - 1])].filter((i) => i >= 0 && i < n);
  const cases = [
    ...sample.map((i) => ({
      what: `key of user ${i + 1}`,
      headers: { Authorization: `Bearer ${seed.keys[i]!}` },
      userId: seed.userIds[i]!,
      csrf: null as string | null,
    })),
    {
      what: 'session cookie',
      headers: { Cookie: `${cookieName}=${seed.session.token}` },
      userId: seed.session.userId,
      csrf: seed.session.csrfToken,
    },
  ];
  for (const c of cases) {
    const answers: JsonAnswer[] = [];
    for (const t of [service, floor]) {
      const a = await call(`${t.base}${ME}`, { headers: c.headers });
      const data = dataOf<MeData>(a);
      if (a.status !== 200 || !data?.user || data.user.id !== c.userId || data.csrf_token !== c.csrf) {
        throw new Error(
          `${t.label}: GET ${ME} with the ${c.what} answered ${a.status} ${a.text.slice(0, 400)}; ` +
            `expected 200 with user ${c.userId} and csrf_token ${String(c.csrf)}`,
        );
      }
      answers.push(a);
    }
    const [s, f] = answers;
    if (!isDeepStrictEqual(s!.body, f!.body)) {
      throw new Error(`GET ${ME} with the ${c.what}: the API and the floor differ in data.user: ${differingFields(dataOf<MeData>(s!)?.user, dataOf<MeData>(f!)?.user)}`);
    }
  }
  for (const t of [service, floor]) {
    const a = await call(`${t.base}${ME}`, { headers: { Authorization: `Bearer ${seed.unknownKey}` } });
    if (a.status !== 401) throw new Error(`${t.label}: GET ${ME} with an unknown key answered ${a.status}, expected 401`);
  }
  console.log(`bench: ${ME}: the API and the floor answer ${sample.length} keys and the session with the same data; an unknown key gets 401 from both`);
}

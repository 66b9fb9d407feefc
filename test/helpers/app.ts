import supertest from 'supertest';
import { createApp, type AppDeps } from '../../api/app.js';

/** A supertest client over a fresh app instance (no port is opened). */
export function api(deps: AppDeps = {}) {
  return supertest(createApp(deps).callback());
}

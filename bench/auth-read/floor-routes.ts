/**
 * How a floor module adds routes to the floor server (bench/auth-read/floor-server.ts)
 * without touching its dispatch: it exports a function taking the server's stores and
 * answering its routes; floor-server.ts lists it in FLOOR_MODULES. A route with
 * `auth: true` runs after the server's `authenticate()` (the same credentials check and
 * per-user limit as `/v1/auth/me`) and gets the caller; `auth: false` routes (a gateway's
 * callback, a signed link) get null and do their own checks, as the API's routes do.
 */
import type { Redis } from 'ioredis';
import type Koa from 'koa';
import type pg from 'pg';
import type { FloorCaller } from './floor-common.js';

export interface FloorStores {
  pool: pg.Pool;
  redis: Redis;
  /** The API's PUBLIC_BASE_URL, for URLs in answers. */
  publicBaseUrl: string;
}

export interface FloorRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Matched against the whole path; its groups are `params`. */
  path: RegExp;
  auth: boolean;
  handle(ctx: Koa.Context, caller: FloorCaller | null, params: readonly string[]): Promise<void>;
}

export type FloorModule = (stores: FloorStores) => FloorRoute[];

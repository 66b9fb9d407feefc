/**
 * Who acts on a service call. Routes build these from the request with `actorOf` and
 * `staffOf` (api/kit.ts); services never see `ctx`.
 */

/** A signed-in user (or staff acting as a user) on a consumer route. */
export interface Actor {
  userId: string;
  role: 'user' | 'admin';
}

/** Staff on an operator route: who, from where, and the note they gave (audit trail). */
export interface StaffActor {
  actorId: string;
  ip: string;
  note?: string | null;
}

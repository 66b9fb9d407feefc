/**
 * Roles and member statuses of a workspace (enterprise spec section 5, decision D7), with
 * the one table of member status moves. A move not in this table does not exist; each is
 * a compare-and-set (`transitionMember` in members.ts, ARCHITECTURE rule 3).
 *
 *   invited --accept (the invitee)--> active
 *   invited | active | suspended --remove (an admin, or the member leaving)--> removed
 *
 * Role changes are not status moves: they keep the status and are checked by rank.
 */
export const ROLES = ['viewer', 'operator', 'finance', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** Roles rank viewer < operator < finance < admin < owner (spec section 5). */
export function rankOf(role: Role): number {
  return ROLES.indexOf(role);
}

/** Only an owner grants owner; an admin grants every other role; the rest grant nothing (decision D7). */
export function canGrant(granter: Role, role: Role): boolean {
  return role === 'owner' ? granter === 'owner' : rankOf(granter) >= rankOf('admin');
}

/** A member invite not accepted within this time is gone (issue 42, R5): listed nowhere, accepted never. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;

export const MEMBER_STATUSES = ['invited', 'active', 'suspended', 'removed'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

export interface MemberTransition {
  from: readonly MemberStatus[];
  to: MemberStatus;
}

export const MEMBER_TRANSITIONS = {
  accept: { from: ['invited'], to: 'active' },
  /** Withdrawing an invite, removing a member, or leaving (the target is yourself). */
  remove: { from: ['invited', 'active', 'suspended'], to: 'removed' },
} as const satisfies Record<string, MemberTransition>;

export type MemberTransitionName = keyof typeof MEMBER_TRANSITIONS;

export type KybStatus = 'not_started' | 'draft' | 'pending' | 'verified' | 'rejected';
export const ENTITY_TYPES = ['pt', 'pt_perorangan', 'cv', 'firma', 'koperasi', 'ud', 'foreign'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

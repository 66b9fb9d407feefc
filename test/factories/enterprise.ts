/** Factories for enterprise workspaces, members and workspace keys (real services, real database). */
import { clock } from '../../shared/clock.js';
import { db } from '../../shared/db.js';
import { register } from '../../shared/enterprise/service.js';
import { createKey } from '../../shared/enterprise/keys.js';
import type { MemberRow, WorkspaceRow } from '../../shared/enterprise/repo.js';
import type { Role } from '../../shared/enterprise/states.js';
import type { UserRow } from '../../shared/users/repo.js';
import { config } from '../../shared/config.js';
import { createSession } from '../../shared/auth/sessions.js';
import { issueKey } from '../helpers/auth-signin-util.js';
import { createUser } from './users.js';

let seq = 0;

export async function createWorkspace(owner?: UserRow, name?: string): Promise<{ workspace: WorkspaceRow; owner: UserRow; ownerMember: MemberRow }> {
  seq += 1;
  const user = owner ?? (await createUser({ fullName: `Owner ${seq}` })).user;
  const made = await register(
    { userId: user.id, userName: user.full_name },
    { legal_name: `PT Contoh ${seq}`, display_name: name ?? `Contoh ${seq}`, entity_type: 'pt', nib: '1234567890123', country_code: 'ID' },
    { ip: '127.0.0.1' },
  );
  return { workspace: made.workspace, owner: user, ownerMember: made.membership };
}

/** An active member with the given role (joined a second after the owner). */
export async function addMember(workspaceId: string, role: Role, user?: UserRow, status: 'active' | 'invited' = 'active') {
  const u = user ?? (await createUser({ fullName: `Member ${role} ${++seq}` })).user;
  const now = clock.now();
  // An invite is issued by someone who may grant it (accept re-reads the inviter): the workspace's first owner.
  const inviter = status === 'invited' ? ((await db('workspace_members').where({ workspace_id: workspaceId, role: 'owner', status: 'active' }).orderBy('created_at').first()) as MemberRow | undefined) : undefined;
  const [m] = (await db('workspace_members')
    .insert({
      workspace_id: workspaceId,
      user_id: u.id,
      role,
      status,
      invited_by: inviter?.user_id ?? null,
      joined_at: status === 'active' ? new Date(now.getTime() + 1000) : null,
      created_at: now,
      updated_at: now,
    })
    .returning('*')) as MemberRow[];
  return { user: u, member: m! };
}

/** A workspace key made by `member` (through the service, as the route does). */
export async function workspaceKey(
  workspaceId: string,
  member: { member: MemberRow; user: UserRow },
  scopes: string[] = ['read'],
): Promise<{ id: string; key: string }> {
  const { row, plaintext } = await createKey(
    { workspaceId, memberId: member.member.id, userId: member.user.id, userName: member.user.full_name, role: member.member.role },
    { label: `key ${++seq}`, scopes },
  );
  return { id: row.id, key: plaintext };
}

export type Cred =
  | { kind: 'session'; cookie: string; csrf: string }
  | { kind: 'personal_key'; key: string }
  | { kind: 'workspace_key'; key: string };

/** Headers for a credential (session writes carry the CSRF token). */
export function headersOf(cred: Cred, account?: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (cred.kind === 'session') {
    h.Cookie = cred.cookie;
    h['X-CSRF-Token'] = cred.csrf;
  } else h.Authorization = `Bearer ${cred.key}`;
  if (account) h['X-Enterprise-Account'] = account;
  return h;
}

/** A dashboard session (made the way sign-in makes it, without the password hashing). */
export async function sessionOf(user: UserRow): Promise<Cred> {
  const s = await createSession(db, user.id, { ip: '127.0.0.1', userAgent: 'test' });
  return { kind: 'session', cookie: `${config.sessionCookieName}=${s.token}`, csrf: s.csrfToken };
}

export async function personalKeyOf(user: UserRow): Promise<Cred> {
  return { kind: 'personal_key', key: await issueKey(user.id) };
}

/** Factories for outbound webhooks: endpoints made through the service, feed events appended as a change would. */
import { db } from '../../shared/db.js';
import type { WorkspaceActor } from '../../shared/enterprise/access.js';
import { appendEvent, type EventInput, type EventRow } from '../../shared/enterprise/events.js';
import type { MemberRow } from '../../shared/enterprise/repo.js';
import { createEndpoint } from '../../shared/webhooks/service.js';
import type { EndpointView } from '../../shared/webhooks/repo.js';
import type { UserRow } from '../../shared/users/repo.js';

export function actorOf(workspaceId: string, m: { member: MemberRow; user: UserRow }): WorkspaceActor {
  return { workspaceId, memberId: m.member.id, role: m.member.role, userId: m.user.id, userName: m.user.full_name };
}

export async function makeEndpoint(
  actor: WorkspaceActor,
  input: { url: string; events?: string[]; description?: string },
): Promise<{ endpoint: EndpointView; secret: string }> {
  return createEndpoint(actor, { url: input.url, events: input.events ?? ['*'], description: input.description });
}

/** Appends one event to the workspace feed in a transaction of its own. */
export async function feedEvent(workspaceId: string, input: Partial<EventInput> & { event: string }): Promise<EventRow> {
  return db.transaction((trx) => appendEvent(trx, workspaceId, { entityType: 'deal', summary: `${input.event} happened`, ...input }));
}

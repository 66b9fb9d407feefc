/**
 * Documents and notes (enterprise spec 4.7; section 8: each notes route 60 per minute). Each route
 * states its spec rule in `enterpriseAuth(rule)` (lowest role), then its limits,
 * validation and `enterpriseIdempotent` for the writes; a keyed write passes `txOf(ctx)` so
 * its change and the stored answer commit together.
 */
import * as S from '../../shared/documents/schemas.js';
import * as documents from '../../shared/documents/service.js';
import * as notes from '../../shared/documents/notes.js';
import * as out from '../../shared/documents/serialize.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { idOf, paginated } from '../kit.js';
import { enterpriseAuth, enterpriseIdempotent as idempotent, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { txOf } from '../middleware/idempotency.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const documentsRouter = createRouter();

/**
 * Section 8: "Templates, notes, API keys, webhooks: 60 per minute" (per user, before
 * validation: invalid and refused bodies count). Each notes route counts on its own, as the
 * template routes do: listing or deleting never takes an addition's budget.
 */
const perMinute = (name: string): RateLimitRule => ({ name, points: 60, durationSeconds: 60, by: 'user' });
export const LIMITS = { notes: perMinute('ent-notes'), notesList: perMinute('ent-notes-list'), notesDelete: perMinute('ent-notes-delete') };

const D = '/v1/enterprise/documents';
const N = '/v1/enterprise/deals/:id/notes';
const nidOf = (ctx: Ctx): string => paramsOf<{ nid: string }>(ctx).nid;

documentsRouter.get(D, enterpriseAuth({ role: 'viewer' }), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<S.ListQuery>(ctx);
  const { rows, total } = await documents.listDocuments(workspaceActorOf(ctx), q);
  const reader = workspaceActorOf(ctx).userId;
  paginated(ctx, rows.map((d) => out.serializeDocumentFor(d, reader)), { page: q.page, limit: q.limit, total });
});

documentsRouter.post(D, enterpriseAuth({ role: 'operator' }), validate({ body: S.create }), idempotent, async (ctx) => {
  const actor = workspaceActorOf(ctx);
  ok(ctx, out.serializeCreated(await documents.addDocument(txOf(ctx), actor, bodyOf<S.DocumentInput>(ctx)), actor.userId), 201);
});

documentsRouter.delete(`${D}/:id`, enterpriseAuth({ role: 'operator' }), validate({ params: S.idParams }), idempotent, async (ctx) => {
  ok(ctx, await documents.deleteDocument(txOf(ctx), workspaceActorOf(ctx), idOf(ctx)));
});

documentsRouter.get(N, enterpriseAuth({ role: 'viewer' }), rateLimit(LIMITS.notesList), validate({ params: S.idParams, query: S.notesList }), async (ctx) => {
  const q = queryOf<{ page: number; limit: number }>(ctx);
  const { rows, total } = await notes.listNotes(workspaceActorOf(ctx), idOf(ctx), q.page, q.limit);
  paginated(ctx, rows.map(out.serializeNote), { page: q.page, limit: q.limit, total });
});

documentsRouter.post(N, enterpriseAuth({ role: 'operator' }), rateLimit(LIMITS.notes), validate({ params: S.idParams, body: S.note }), idempotent, async (ctx) => {
  ok(ctx, out.serializeNote(await notes.addNote(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), bodyOf<S.NoteInput>(ctx))), 201);
});

documentsRouter.delete(`${N}/:nid`, enterpriseAuth({ role: 'operator' }), rateLimit(LIMITS.notesDelete), validate({ params: S.noteParams }), idempotent, async (ctx) => {
  ok(ctx, await notes.deleteNote(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), nidOf(ctx)));
});

/** SQL of a workspace's deal templates (enterprise spec 2 "Template", 4.3; table deal_templates). */
import type { Db } from '../db.js';

/** A template milestone as stored (jsonb): exactly one of `amount_pct` and `amount`. */
export interface StoredMilestone {
  title: string;
  amount_pct?: number;
  amount?: number;
  required_evidence: string | null;
  due_offset_days: number | null;
}

export interface TemplateRow {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  milestones: StoredMilestone[];
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** A template with its creator's name (the answer's `created_by`). */
export interface TemplateWithCreator extends TemplateRow {
  creator_name: string;
}

const WITH_CREATOR = ['t.*', 'u.full_name as creator_name'];

const withCreator = (trx: Db) => trx('deal_templates as t').join('users as u', 'u.id', 't.created_by').select(WITH_CREATOR);

/** The text the workspace's template lock is hashed from (tests hold it to stage a concurrent save). */
export const templateLockKey = (workspaceId: string): string => `deal-templates:${workspaceId}`;

/**
 * The workspace's template lock (transaction-level advisory lock): false when another
 * template save of the same workspace holds it. Held until the transaction ends.
 */
export async function tryTemplateLock(trx: Db, workspaceId: string): Promise<boolean> {
  const lock = await trx.raw<{ rows: { locked: boolean }[] }>('SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)) AS locked', [
    templateLockKey(workspaceId),
  ]);
  return lock.rows[0]?.locked === true;
}

export async function countTemplates(trx: Db, workspaceId: string): Promise<number> {
  const [row] = await trx('deal_templates').where({ workspace_id: workspaceId }).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** One page of the workspace's templates sorted by name (case-insensitive, then exact, then id), with the total. */
export async function listTemplates(trx: Db, workspaceId: string, page: number, limit: number): Promise<{ rows: TemplateWithCreator[]; total: number }> {
  const total = await countTemplates(trx, workspaceId);
  const rows = (await withCreator(trx)
    .where('t.workspace_id', workspaceId)
    .orderByRaw('lower(t.name), t.name, t.id')
    .limit(limit)
    .offset((page - 1) * limit)) as TemplateWithCreator[];
  return { rows, total };
}

/** A template of the workspace; undefined when the workspace has none with this id. */
export async function templateById(trx: Db, workspaceId: string, id: string): Promise<TemplateWithCreator | undefined> {
  return (await withCreator(trx).where({ 't.id': id, 't.workspace_id': workspaceId }).first()) as TemplateWithCreator | undefined;
}

export async function insertTemplate(trx: Db, input: Omit<TemplateRow, 'id'>): Promise<TemplateRow> {
  const [row] = (await trx('deal_templates')
    .insert({ ...input, milestones: JSON.stringify(input.milestones) })
    .returning('*')) as TemplateRow[];
  return row!;
}

/** Changes a template of the workspace; undefined when the workspace has none with this id. */
export async function updateTemplate(
  trx: Db,
  workspaceId: string,
  id: string,
  patch: Partial<Pick<TemplateRow, 'name' | 'description' | 'milestones'>> & { updated_at: Date },
): Promise<TemplateRow | undefined> {
  const values: Record<string, unknown> = { ...patch };
  if (patch.milestones) values.milestones = JSON.stringify(patch.milestones);
  const [row] = (await trx('deal_templates').where({ id, workspace_id: workspaceId }).update(values).returning('*')) as TemplateRow[];
  return row;
}

/** Deletes a template of the workspace; undefined when the workspace has none with this id. */
export async function deleteTemplate(trx: Db, workspaceId: string, id: string): Promise<TemplateRow | undefined> {
  const [row] = (await trx('deal_templates').where({ id, workspace_id: workspaceId }).delete().returning('*')) as TemplateRow[];
  return row;
}

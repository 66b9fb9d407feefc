/**
 * Deal templates (enterprise spec 2 "Template", 4.3, 8; issue 26): a workspace keeps up to
 * 50 named milestone plans; a deal can be made from one (`templateMilestones`).
 *
 * Every save (create, update, delete) first takes the workspace's template lock with
 * `pg_try_advisory_xact_lock`: a second save of the same workspace that starts while one
 * runs is refused at once with 409 TEMPLATE_BUSY instead of waiting, and the 50-template
 * count is taken under the lock, so it is exact. Each save appends its event
 * (template.created, template.updated, template.deleted) in its own transaction; templates
 * move no money (yet are live in a live workspace: livemode is the workspace's).
 */
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { byOf, type WorkspaceActor } from '../enterprise/access.js';
import { appendEvent } from '../enterprise/events.js';
import { amountsFromPercentages } from './fees.js';
import { MILESTONE_AMOUNT, type TemplateInput, type TemplateMilestoneInput, type TemplatePatch } from './template-schemas.js';
import { templateErrors } from './template-errors.js';
import * as repo from './templates-repo.js';
import type { StoredMilestone, TemplateWithCreator } from './templates-repo.js';

export type { StoredMilestone, TemplateRow, TemplateWithCreator } from './templates-repo.js';
export type { TemplateInput, TemplateMilestoneInput, TemplatePatch } from './template-schemas.js';

/** Templates per workspace (section 8). */
export const TEMPLATES_PER_WORKSPACE = 50;

/** A milestone a deal gets from a template. */
export interface MilestoneFromTemplate {
  title: string;
  amount: number;
  required_evidence: string | null;
  due_offset_days: number | null;
}

const rupiah = (n: number): string => n.toLocaleString('en-US');

/** The body's milestones as stored: exactly one of amount_pct and amount; empty evidence text is none. */
function toStored(milestones: TemplateMilestoneInput[]): StoredMilestone[] {
  return milestones.map((m) => ({
    title: m.title,
    ...(m.amount_pct !== undefined ? { amount_pct: m.amount_pct } : { amount: m.amount! }),
    required_evidence: m.required_evidence ? m.required_evidence : null,
    due_offset_days: m.due_offset_days ?? null,
  }));
}

/** The workspace's template lock, or 409 TEMPLATE_BUSY when another save holds it. */
async function lockOrBusy(trx: Db, workspaceId: string): Promise<void> {
  if (!(await repo.tryTemplateLock(trx, workspaceId))) throw templateErrors.busy();
}

export async function listTemplates(actor: WorkspaceActor, page: number, limit: number): Promise<{ rows: TemplateWithCreator[]; total: number }> {
  return repo.listTemplates(db, actor.workspaceId, page, limit);
}

export async function createTemplate(trx: Db | undefined, actor: WorkspaceActor, input: TemplateInput): Promise<TemplateWithCreator> {
  return inTransaction(trx, async (t) => {
    await lockOrBusy(t, actor.workspaceId);
    if ((await repo.countTemplates(t, actor.workspaceId)) >= TEMPLATES_PER_WORKSPACE) throw templateErrors.limit(TEMPLATES_PER_WORKSPACE);
    const now = clock.now();
    const row = await repo.insertTemplate(t, {
      workspace_id: actor.workspaceId,
      name: input.name,
      description: input.description ? input.description : null,
      milestones: toStored(input.milestones),
      created_by: actor.userId,
      created_at: now,
      updated_at: now,
    });
    await appendEvent(t, actor.workspaceId, {
      event: 'template.created',
      entityType: 'template',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Template ${row.name} created with ${row.milestones.length} milestone${row.milestones.length === 1 ? '' : 's'}`,
    });
    return (await repo.templateById(t, actor.workspaceId, row.id))!;
  });
}

/** Changes any subset of name, description and milestones (replaced whole). */
export async function updateTemplate(trx: Db | undefined, actor: WorkspaceActor, id: string, input: TemplatePatch): Promise<TemplateWithCreator> {
  if (!isUuid(id)) throw templateErrors.notFound();
  return inTransaction(trx, async (t) => {
    await lockOrBusy(t, actor.workspaceId);
    const patch: Parameters<typeof repo.updateTemplate>[3] = { updated_at: clock.now() };
    if (input.name !== undefined) patch.name = input.name;
    if (input.description !== undefined) patch.description = input.description ? input.description : null;
    if (input.milestones !== undefined) patch.milestones = toStored(input.milestones);
    const row = await repo.updateTemplate(t, actor.workspaceId, id, patch);
    if (!row) throw templateErrors.notFound();
    await appendEvent(t, actor.workspaceId, {
      event: 'template.updated',
      entityType: 'template',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Template ${row.name} changed: ${Object.keys(input).sort().join(', ')}`,
    });
    return (await repo.templateById(t, actor.workspaceId, row.id))!;
  });
}

export async function deleteTemplate(trx: Db | undefined, actor: WorkspaceActor, id: string): Promise<{ id: string; deleted: true }> {
  if (!isUuid(id)) throw templateErrors.notFound();
  return inTransaction(trx, async (t) => {
    await lockOrBusy(t, actor.workspaceId);
    const row = await repo.deleteTemplate(t, actor.workspaceId, id);
    if (!row) throw templateErrors.notFound();
    await appendEvent(t, actor.workspaceId, {
      event: 'template.deleted',
      entityType: 'template',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Template ${row.name} deleted`,
    });
    return { id: row.id, deleted: true };
  });
}

/**
 * The milestones a deal of `totalAmount` gets from a template of the workspace (deal
 * creation with a template). Percentages become amounts with `amountsFromPercentages`
 * (each share floored to whole rupiah, the remainder on the last milestone); an amount
 * template needs `totalAmount` equal to the sum of its amounts. Refusals: 404 NOT_FOUND
 * for a template the workspace does not have; 400 INVALID_BODY on `total_amount` when
 * the total is not a whole positive rupiah amount, differs from an amount template's sum,
 * or gives a milestone outside 10,000 to 50,000,000,000.
 */
export async function templateMilestones(trx: Db, workspaceId: string, templateId: string, totalAmount: number): Promise<MilestoneFromTemplate[]> {
  if (!isUuid(templateId)) throw templateErrors.notFound();
  const template = await repo.templateById(trx, workspaceId, templateId);
  if (!template) throw templateErrors.notFound();
  if (!Number.isSafeInteger(totalAmount) || totalAmount < 1) {
    throw templateErrors.invalidField('total_amount', 'must be a whole number of rupiah, at least 1');
  }
  const ms = template.milestones;
  let amounts: number[];
  if (ms.every((m) => typeof m.amount_pct === 'number')) {
    amounts = amountsFromPercentages(totalAmount, ms.map((m) => m.amount_pct!));
  } else {
    amounts = ms.map((m) => m.amount!);
    const sum = amounts.reduce((s, a) => s + a, 0);
    if (sum !== totalAmount) {
      throw templateErrors.invalidField('total_amount', `must equal the sum of the template's milestone amounts (${rupiah(sum)})`);
    }
  }
  const outside = amounts.findIndex((a) => a < MILESTONE_AMOUNT.min || a > MILESTONE_AMOUNT.max);
  if (outside >= 0) {
    throw templateErrors.invalidField(
      'total_amount',
      `gives milestone ${outside + 1} ${rupiah(amounts[outside]!)} rupiah; every milestone must be ${rupiah(MILESTONE_AMOUNT.min)} to ${rupiah(MILESTONE_AMOUNT.max)}`,
    );
  }
  return ms.map((m, i) => ({
    title: m.title,
    amount: amounts[i]!,
    required_evidence: m.required_evidence ?? null,
    due_offset_days: m.due_offset_days ?? null,
  }));
}

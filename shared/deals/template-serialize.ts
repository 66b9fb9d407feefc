/** Answer shapes of the deal template routes (enterprise spec 2 "Template", 4.3). */
import type { StoredMilestone, TemplateWithCreator } from './templates-repo.js';

const iso = (d: Date | string): string => new Date(d).toISOString();

/** A template milestone: `title`, `amount_pct` or `amount` (whichever the template uses), `required_evidence`, `due_offset_days`. */
export function serializeTemplateMilestone(m: StoredMilestone) {
  return {
    title: m.title,
    ...(typeof m.amount_pct === 'number' ? { amount_pct: m.amount_pct } : { amount: Number(m.amount) }),
    required_evidence: m.required_evidence ?? null,
    due_offset_days: m.due_offset_days ?? null,
  };
}

export function serializeTemplate(t: TemplateWithCreator) {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    milestones: t.milestones.map(serializeTemplateMilestone),
    created_by: { id: t.created_by, name: t.creator_name },
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

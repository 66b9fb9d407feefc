/**
 * The deal status of `dealStatus` (states.ts) as a SQL aggregate, for reports that count or
 * list deals by status without loading their milestones (enterprise spec 4.8; decision 0020
 * "Reports"). The same rule, in the same order, over the deal row `d` and its milestone rows
 * `m` (LEFT JOINed; the query GROUPs BY the deal's id):
 *
 *   cancelled         the deal was cancelled, or no milestone is live (not cancelled)
 *   disputed          any milestone disputed
 *   completed         every live milestone released
 *   in_progress       at least one released
 *   funded            money held for at least one (HELD)
 *   awaiting_funding  at least one waits for funding
 *   terms_review      activated on a live workspace, counterparty not verified yet
 *   draft             otherwise
 *
 * test/integration/reports/status-sql.test.ts compares it with dealStatus over every mix
 * of up to three milestone statuses and over random larger deals.
 */
/**
 * `HELD` (states.ts) written out as SQL: SQL text never has values put into it (decision
 * 0025). A test holds the two equal (test/integration/reports/status-sql.test.ts).
 */
export const HELD_SQL = "('funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed')";

/** `CASE ... END` giving the deal status of `d` over its milestones `m` (aliases as named in the query). */
export function dealStatusSql(d = 'd', m = 'm'): string {
  return `CASE
    WHEN ${d}.cancelled_at IS NOT NULL OR count(${m}.id) FILTER (WHERE ${m}.status <> 'cancelled') = 0 THEN 'cancelled'
    WHEN bool_or(${m}.status = 'disputed') THEN 'disputed'
    WHEN bool_and(${m}.status = 'released') FILTER (WHERE ${m}.status <> 'cancelled') THEN 'completed'
    WHEN bool_or(${m}.status = 'released') THEN 'in_progress'
    WHEN bool_or(${m}.status IN ${HELD_SQL}) THEN 'funded'
    WHEN bool_or(${m}.status = 'awaiting_funding') THEN 'awaiting_funding'
    WHEN ${d}.terms_review THEN 'terms_review'
    ELSE 'draft'
  END`;
}

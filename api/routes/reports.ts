/**
 * Reports (enterprise spec 4.8; section 8 limits; decision 0020 "Reports"): the summary of
 * a range (viewer; 30 per minute) and the deals and disbursements CSV exports (finance; 5
 * new exports per minute each), built by the exports worker and answered as the audit
 * export is (202 with the export id until built, then the file as an attachment).
 */
import * as S from '../../shared/reports/schemas.js';
import * as reports from '../../shared/reports/service.js';
import { serializeSummary } from '../../shared/reports/serialize.js';
import { ok, createRouter } from '../context.js';
import { answerExport, newExportLimit } from '../kit.js';
import { enterpriseAuth, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { queryOf, validate } from '../middleware/validate.js';

export const reportsRouter = createRouter();

const perMinute = (name: string, points: number): RateLimitRule => ({ name, points, durationSeconds: 60, by: 'user' });
/** Section 8: summary 30 per minute; each export 5 new exports per minute. */
export const LIMITS = {
  summary: perMinute('ent-report-summary', 30),
  dealsExport: perMinute('ent-deals-export', 5),
  disbursementsExport: perMinute('ent-disbursements-export', 5),
};

const P = '/v1/enterprise/reports';

reportsRouter.get(`${P}/summary`, enterpriseAuth({ role: 'viewer' }), rateLimit(LIMITS.summary), validate({ query: S.summary }), async (ctx) => {
  ok(ctx, serializeSummary(await reports.summary(workspaceActorOf(ctx), queryOf<S.SummaryQuery>(ctx))));
});

reportsRouter.get(`${P}/deals.csv`, enterpriseAuth({ role: 'finance' }), validate({ query: S.csvExport }), newExportLimit(LIMITS.dealsExport), async (ctx) => {
  await answerExport(ctx, await reports.dealsExport(workspaceActorOf(ctx), queryOf<S.ExportQuery>(ctx)), `${P}/deals.csv`, 'deals');
});

reportsRouter.get(`${P}/disbursements.csv`, enterpriseAuth({ role: 'finance' }), validate({ query: S.csvExport }), newExportLimit(LIMITS.disbursementsExport), async (ctx) => {
  await answerExport(ctx, await reports.disbursementsExport(workspaceActorOf(ctx), queryOf<S.ExportQuery>(ctx)), `${P}/disbursements.csv`, 'disbursements');
});

import { buildAuditExport, buildExport, purgeExpiredExports } from '../shared/enterprise/exports.js';
import { queueProcessors } from './types.js';

/** exports queue: builds a requested CSV export once (audit; reports' deals and disbursements); a re-run finds it ready and does nothing. */
export const exportsQueue = queueProcessors('exports', {
  'exports.audit-csv': async (job) => buildAuditExport(job.data.export_id),
  'exports.report-csv': async (job) => buildExport(job.data.export_id),
  // Exports past EXPORT_RETENTION_MS, rows and parts (issue 42, review R10).
  'exports.purge-expired': async () => purgeExpiredExports(),
});

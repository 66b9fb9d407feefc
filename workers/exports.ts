import { UnrecoverableError } from 'bullmq';
import { buildAuditExport } from '../shared/enterprise/exports.js';
import type { QueueProcessors } from './types.js';

/** exports queue: builds a requested CSV export once; a re-run finds it ready and does nothing. */
export const exportsQueue: QueueProcessors = {
  queue: 'exports',
  processors: {
    'exports.audit-csv': async (job) => {
      const id = job.data.export_id;
      if (typeof id !== 'string') throw new UnrecoverableError('export job data is malformed');
      return buildAuditExport(id);
    },
  },
};

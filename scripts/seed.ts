/** Seeds the sandbox (idempotent): admin from the environment, sandbox gateway, fee settings. */
import { db } from '../shared/db.js';
import { seedSandbox } from '../shared/seed/sandbox.js';

try {
  const result = await seedSandbox(db);
  console.log(`seed: done (admin: ${result.admin})`);
} finally {
  await db.destroy();
}

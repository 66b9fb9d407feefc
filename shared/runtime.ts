/**
 * The Node.js versions the service supports (issue 45): the current LTS line, 24, on which
 * CI runs the suite (`scripts/node-lts.sh`). Older lines still start, with a warning: Node 20
 * reached end of life in April 2026 and gets no security fixes.
 */
export const SUPPORTED_NODE_MAJOR = 24;

/** A warning for the log when `version` (e.g. `20.20.2`) is older than the supported line, else undefined. */
export function runtimeWarning(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= SUPPORTED_NODE_MAJOR) return undefined;
  return `Node.js ${version} is not supported: run Node.js ${SUPPORTED_NODE_MAJOR} LTS (.nvmrc; scripts/node-lts.sh fetches it)` +
    (major <= 20 ? '. Node.js 20 reached end of life in April 2026 and gets no security fixes' : '');
}

/** Section 5 decisions as pure functions, the export's CSV cells and range rules. */
import { expect } from 'chai';
import { checkCredential, checkRole, keyRole, parseAccountHeader, type Credential, type RouteRule } from '../../../shared/enterprise/access.js';
import { csvCell, parseRange } from '../../../shared/enterprise/exports.js';
import { ROLES } from '../../../shared/enterprise/states.js';
import { clock } from '../../../shared/clock.js';
import { AppError } from '../../../shared/errors.js';

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof AppError) return `${err.status} ${err.code}`;
    throw err;
  }
}

describe('enterprise access rules (unit)', () => {
  const dash: RouteRule = { role: 'viewer', dashboardOnly: true };
  const open: RouteRule = { role: 'viewer', dashboardOnly: false };

  it('dashboard-only routes refuse both key kinds, sessions pass', () => {
    for (const c of ['personal_key', 'workspace_key'] as Credential[]) {
      expect(codeOf(() => checkCredential(dash, c, 'GET', ['read', 'write']))).to.equal('403 KEY_NOT_ALLOWED');
    }
    expect(codeOf(() => checkCredential(dash, 'session', 'POST', null))).to.equal(null);
  });

  it('a read-only workspace key may only GET', () => {
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(codeOf(() => checkCredential(open, 'workspace_key', m, ['read']))).to.equal('403 SCOPE_REQUIRED');
    expect(codeOf(() => checkCredential(open, 'workspace_key', 'GET', ['read']))).to.equal(null);
    expect(codeOf(() => checkCredential(open, 'workspace_key', 'POST', ['read', 'write']))).to.equal(null);
    expect(codeOf(() => checkCredential(open, 'personal_key', 'POST', null))).to.equal(null);
  });

  it('read keys act as viewers, read+write keys as their creator', () => {
    for (const r of ROLES) {
      expect(keyRole(['read'], r)).to.equal('viewer');
      expect(keyRole(['read', 'write'], r)).to.equal(r);
    }
  });

  it('roles rank viewer < operator < finance < admin < owner', () => {
    ROLES.forEach((have, i) =>
      ROLES.forEach((need, j) => expect(codeOf(() => checkRole(have, need)), `${have} vs ${need}`).to.equal(i >= j ? null : '403 FORBIDDEN')),
    );
  });

  it('X-Enterprise-Account: absent, a UUID, or 400 INVALID_ACCOUNT', () => {
    expect(parseAccountHeader('')).to.equal(undefined);
    expect(parseAccountHeader('5B0C1D2E-3F40-4A5B-8C6D-7E8F90A1B2C3')).to.equal('5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3');
    for (const bad of ['ws_1', '5b0c1d2e3f404a5b8c6d7e8f90a1b2c3', "' OR 1=1 --"]) expect(codeOf(() => parseAccountHeader(bad))).to.equal('400 INVALID_ACCOUNT');
  });
});

describe('enterprise audit export helpers (unit)', () => {
  it('quotes CSV cells and defuses formulas', () => {
    expect(csvCell(null)).to.equal('');
    expect(csvCell(12)).to.equal('12');
    expect(csvCell('a,b')).to.equal('"a,b"');
    expect(csvCell('say "hi"')).to.equal('"say ""hi"""');
    expect(csvCell('=SUM(A1)')).to.equal("'=SUM(A1)");
    expect(csvCell('-5')).to.equal("'-5");
    expect(csvCell('@x,y')).to.equal(`"'@x,y"`);
    expect(csvCell(new Date('2026-11-27T00:00:00Z'))).to.equal('2026-11-27T00:00:00.000Z');
  });

  it('ranges: default 90 days ending today, both days included, at most 366', () => {
    clock.set(new Date('2026-11-27T23:00:00Z'));
    try {
      expect(parseRange({})).to.deep.equal({ from: '2026-08-30', to: '2026-11-27' });
      expect(parseRange({ from: '2025-11-27', to: '2026-11-27' })).to.deep.equal({ from: '2025-11-27', to: '2026-11-27' });
      expect(codeOf(() => parseRange({ from: '2025-11-26', to: '2026-11-27' }))).to.equal('400 INVALID_QUERY');
      expect(codeOf(() => parseRange({ from: '2026-11-28' }))).to.equal('400 INVALID_QUERY');
      expect(codeOf(() => parseRange({ to: '2026-13-01' }))).to.equal('400 INVALID_QUERY');
    } finally {
      clock.reset();
    }
  });
});

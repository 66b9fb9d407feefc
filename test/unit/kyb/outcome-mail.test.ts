/** The KYB review-outcome e-mail sets the counterparty's (customer-typed) name in as a plain name. */
import { expect } from 'chai';
import type { CounterpartyRow } from '../../../shared/enterprise/counterparties-repo.js';
import type { WorkspaceRow } from '../../../shared/enterprise/repo.js';
import { outcomeMail } from '../../../shared/kyb/mail.js';
import type { KybApplicationRow } from '../../../shared/kyb/repo.js';
import type { KybSubject } from '../../../shared/kyb/subject.js';

const workspace = { id: 'w', display_name: 'Acme https://evil.example/x' } as unknown as WorkspaceRow;
const app = { version: 2, decision_reason: 'Dokumen kurang jelas', change_requests: [] } as unknown as KybApplicationRow;

describe('kyb: the review-outcome e-mail', () => {
  it('carries the counterparty name as defanged plain text (no link, address or line break)', () => {
    const counterparty = { id: 'c', name: 'PT Maju\r\nBcc: pay@evil.com visit www.evil.example/login' } as unknown as CounterpartyRow;
    const subject: KybSubject = { type: 'counterparty', workspace, counterparty, invitedBy: null };
    for (const action of ['kyb.approved', 'kyb.rejected', 'kyb.changes_requested']) {
      const mail = outcomeMail(action, subject, app);
      const all = `${mail.subject}\n${mail.text}`;
      expect(all, action).to.not.include('evil.com');
      expect(all, action).to.not.include('www.evil.example');
      expect(all, action).to.not.include('@');
      expect(all, action).to.not.include('Bcc:');
      expect(mail.subject, action).to.not.match(/[\r\n]/);
      expect(mail.text, action).to.include('PT Maju Bcc pay evil com visit www evil example login');
      expect(mail.text, action).to.include('Dokumen kurang jelas');
    }
  });

  it('defangs the workspace name for a workspace subject too, and never leaves the name empty', () => {
    const mail = outcomeMail('kyb.approved', { type: 'account', workspace, invitedBy: null } as unknown as KybSubject, app);
    expect(mail.text).to.include('Acme https evil example x');
    expect(mail.text).to.not.include('evil.example');
    const blank = outcomeMail('kyb.approved', { type: 'counterparty', workspace, counterparty: { name: '@@//' } as unknown as CounterpartyRow, invitedBy: null }, app);
    expect(blank.subject).to.include('KYB Counterparty:');
  });
});

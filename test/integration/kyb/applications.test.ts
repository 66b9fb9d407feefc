/**
 * The workspace's own KYB application (enterprise spec 2 "KYB application", 3, 4.2, 7, 8;
 * decision 0017): the full and status views and who gets which, can_edit, the read limit;
 * the draft (company and bank merged, people replaced, numbers sealed at rest, the rules
 * after the merge); documents and their slots per entity type; progress; submission
 * (incomplete refused with what is missing, the review's due date in weekdays); the lock
 * once submitted or approved; and one workspace never reaching another's application.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { createUser } from '../../factories/users.js';
import { createUploadRow, createUploadRows } from '../../factories/uploads.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import {
  ACCOUNT_NO,
  KYB,
  NIK,
  NIK_2,
  PASSPORT_NO,
  applicationRows,
  attach,
  attachOk,
  completeDraft,
  completeWorkspace,
  director,
  fullOf,
  patchOk,
  review,
  staffHeaders,
  submittedWorkspace,
  viewOf,
  workspaceRow,
  type FullView,
} from '../../factories/kyb.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';

type Headers = Record<string, string>;

const FULL_KEYS = ['view', 'subject', 'application', 'progress', 'slots', 'history', 'review', 'can_edit'];

/** Every row of every table, as text (to prove a plaintext number is stored nowhere). */
async function wholeDatabase(): Promise<string> {
  const tables = await db.raw<{ rows: { tablename: string }[] }>(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
  const parts: string[] = [];
  for (const { tablename } of tables.rows) parts.push(JSON.stringify(await db(tablename).select('*')));
  return parts.join('\n');
}

const uploadRow = (id: string) => db('uploads').where({ id }).first<{ bound_at: Date | null; bound_kind: string | null; bound_id: string | null }>('*');
const codeOf = (res: { body: { error?: { code?: string } } }): string | undefined => res.body.error?.code;
const documentRows = (applicationId: string) => db('kyb_documents').where({ application_id: applicationId }).select<{ id: string; upload_id: string; doc_type: string; person_id: string | null }[]>('*');

describe('KYB application (workspace)', () => {
  const client = api();

  afterEach(() => clock.reset());

  describe('GET /v1/enterprise/kyb', () => {
    it('owner, admin and finance sessions get the full view of the draft registration opened', async () => {
      const { workspace, owner } = await createWorkspace(undefined, 'Maju Jaya');
      const admin = await addMember(workspace.id, 'admin');
      const finance = await addMember(workspace.id, 'finance');
      for (const [who, user, canEdit] of [
        ['owner', owner, true],
        ['admin', admin.user, true],
        ['finance', finance.user, false],
      ] as const) {
        const v = await viewOf(client, headersOf(await sessionOf(user)));
        expect(Object.keys(v).sort(), who).to.deep.equal([...FULL_KEYS].sort());
        expect(v.view).to.equal('full');
        expect(v.can_edit, who).to.equal(canEdit);
        expect(v.subject).to.deep.equal({
          type: 'account',
          id: workspace.id,
          name: 'Maju Jaya',
          kyb_status: 'not_started',
          is_sandbox: true,
          account_manager: null,
          invited_by: null,
        });
        expect(v.application).to.include({ version: 1, status: 'draft', entity_type: 'pt', legal_name: workspace.legal_name, nib: '1234567890123', country_code: 'ID', submitted_at: null, decided_at: null });
        expect(v.application.bank).to.deep.equal({ bank_name: null, bank_account_holder: null, account_number_last4: null, has_account_number: false });
        expect(v.application.people).to.deep.equal([]);
        expect(v.application.documents).to.deep.equal([]);
        expect(v.application.change_requests).to.deep.equal([]);
        expect(v.progress).to.deep.equal({
          steps: { company: false, people: false, bank: false, documents: false },
          done: 0,
          total: 4,
          missing_documents: ['akta_pendirian', 'sk_kemenkumham', 'bank_proof'],
          complete: false,
        });
        expect(v.history).to.deep.equal([{ version: 1, status: 'draft', submitted_at: null, decided_at: null, decision_reason: null }]);
        expect(v.review).to.deep.equal({ min_days: 1, max_days: 3, due_by: null });
      }
    });

    it('operators, viewers, personal keys (any role) and workspace keys get exactly the status view', async () => {
      const { workspace, owner, ownerMember } = await submittedWorkspace(client);
      const operator = await addMember(workspace.id, 'operator');
      const viewer = await addMember(workspace.id, 'viewer');
      const admin = await addMember(workspace.id, 'admin');
      const finance = await addMember(workspace.id, 'finance');
      const submittedAt = (await applicationRows(workspace.id))[0]!.submitted_at!.toISOString();
      const creds: [string, Cred][] = [
        ['operator session', await sessionOf(operator.user)],
        ['viewer session', await sessionOf(viewer.user)],
        ['owner personal key', await personalKeyOf(owner)],
        ['admin personal key', await personalKeyOf(admin.user)],
        ['finance personal key', await personalKeyOf(finance.user)],
        ['viewer personal key', await personalKeyOf(viewer.user)],
        ['read workspace key', { kind: 'workspace_key', key: (await workspaceKey(workspace.id, { member: ownerMember, user: owner })).key }],
        ['read-write workspace key', { kind: 'workspace_key', key: (await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read', 'write'])).key }],
      ];
      for (const [who, cred] of creds) {
        const res = await client.get(KYB).set(headersOf(cred, cred.kind === 'workspace_key' ? undefined : workspace.id));
        expect(res.status, `${who}: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(res.body.data, who).to.deep.equal({
          view: 'status',
          subject: { kyb_status: 'pending' },
          application: { status: 'submitted', version: 1, submitted_at: submittedAt, decided_at: null },
        });
      }
      // The same callers on a draft: not_started, nothing submitted.
      const fresh = await createWorkspace();
      const key = (await workspaceKey(fresh.workspace.id, { member: fresh.ownerMember, user: fresh.owner })).key;
      const res = await client.get(KYB).set(headersOf({ kind: 'workspace_key', key }));
      expect(res.body.data).to.deep.equal({ view: 'status', subject: { kyb_status: 'not_started' }, application: { status: 'draft', version: 1, submitted_at: null, decided_at: null } });
    });

    it('can_edit is true only for admin and owner sessions, and only while the application is a draft or rejected', async () => {
      const { workspace, owner, h, applicationId } = await completeWorkspace(client);
      const admin = headersOf(await sessionOf((await addMember(workspace.id, 'admin')).user));
      const finance = headersOf(await sessionOf((await addMember(workspace.id, 'finance')).user));
      const canEdit = async (): Promise<boolean[]> => [(await viewOf(client, h)).can_edit, (await viewOf(client, admin)).can_edit, (await viewOf(client, finance)).can_edit];

      expect(await canEdit(), 'draft').to.deep.equal([true, true, false]);
      expect((await client.post(`${KYB}/submit`).set(h).send({})).status).to.equal(200);
      expect(await canEdit(), 'submitted').to.deep.equal([false, false, false]);
      const staff = await staffHeaders();
      expect((await review(client, staff, applicationId, 'reject', { reason: 'NIB does not match the deed' })).status).to.equal(200);
      expect(await canEdit(), 'rejected').to.deep.equal([true, true, false]);
      const restarted = await patchOk(client, h, { company: { industry: 'Wholesale' } });
      expect(restarted.body.data.application).to.include({ version: 2, status: 'draft' });
      expect(restarted.body.data.can_edit).to.equal(true);
      expect((await client.post(`${KYB}/submit`).set(h).send({})).status).to.equal(200);
      const v2 = restarted.body.data.application.id as string;
      expect((await review(client, staff, v2, 'approve', { risk_tier: 'low' })).status).to.equal(200);
      expect(await canEdit(), 'approved').to.deep.equal([false, false, false]);
      void owner;
    });

    it('finance, operators and every API key may not edit: FORBIDDEN for a role too low, KEY_NOT_ALLOWED for keys', async () => {
      const { workspace, owner, ownerMember } = await createWorkspace();
      const finance = await addMember(workspace.id, 'finance');
      const body = { company: { industry: 'Retail' } };
      const refused: [string, Headers, number, string][] = [
        ['finance session', headersOf(await sessionOf(finance.user)), 403, 'FORBIDDEN'],
        ['owner personal key', headersOf(await personalKeyOf(owner)), 403, 'KEY_NOT_ALLOWED'],
        ['read-write workspace key', headersOf({ kind: 'workspace_key', key: (await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read', 'write'])).key }), 403, 'KEY_NOT_ALLOWED'],
      ];
      for (const [who, h, status, code] of refused) {
        const res = await client.patch(KYB).set(h).send(body);
        expect([res.status, res.body.error?.code], who).to.deep.equal([status, code]);
        const sub = await client.post(`${KYB}/submit`).set(h).send({});
        expect([sub.status, sub.body.error?.code], who).to.deep.equal([status, code]);
      }
      expect((await applicationRows(workspace.id))[0]).to.include({ version: 1 });
      expect((await db('kyb_applications').where({ workspace_id: workspace.id }).first<{ industry: string | null }>('industry')).industry).to.equal(null);
    });

    it('allows 120 reads a minute per user: the 121st is 429 RATE_LIMITED with Retry-After; another user still reads', async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      for (let batch = 0; batch < 6; batch++) {
        const answers = await Promise.all(Array.from({ length: 20 }, () => client.get(KYB).set(h)));
        expect(answers.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
      }
      const over = await client.get(KYB).set(h);
      expect(over.status).to.equal(429);
      expect(over.body.error.code).to.equal('RATE_LIMITED');
      expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
      const other = await addMember(workspace.id, 'viewer');
      expect((await client.get(KYB).set(headersOf(await sessionOf(other.user)))).status).to.equal(200);
    });
  });

  describe('PATCH /v1/enterprise/kyb (the draft)', () => {
    it('merges company and bank field by field', async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      await patchOk(client, h, { company: { address: 'Jl. Thamrin 10, Jakarta', npwp: '0123456789012345' }, bank: { bank_name: 'Mandiri' } });
      const second = await patchOk(client, h, { company: { industry: 'Logistics', legal_name: 'PT Maju Bersama' }, bank: { account_number: ACCOUNT_NO } });
      const a = second.body.data.application;
      expect(a).to.include({
        legal_name: 'PT Maju Bersama',
        address: 'Jl. Thamrin 10, Jakarta',
        npwp: '0123456789012345',
        industry: 'Logistics',
        entity_type: 'pt',
        nib: '1234567890123',
        country_code: 'ID',
        monthly_volume: null,
      });
      expect(a.bank).to.deep.equal({ bank_name: 'Mandiri', bank_account_holder: null, account_number_last4: ACCOUNT_NO.slice(-4), has_account_number: true });
      // A field set to null clears it; the others stay.
      const third = await patchOk(client, h, { company: { address: null }, bank: { bank_account_holder: 'PT Maju Bersama' } });
      expect(third.body.data.application).to.include({ address: null, industry: 'Logistics', npwp: '0123456789012345' });
      expect(third.body.data.application.bank).to.deep.equal({ bank_name: 'Mandiri', bank_account_holder: 'PT Maju Bersama', account_number_last4: ACCOUNT_NO.slice(-4), has_account_number: true });
      const rows = await applicationRows(workspace.id);
      expect(rows).to.have.length(1); // a draft is edited in place
      expect((await viewOf(client, h)).application).to.deep.equal(third.body.data.application);
    });

    it('replaces people: a kept id keeps its sealed number and documents; a dropped person loses theirs and the file is released', async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const first = await patchOk(client, h, {
        people: [director(), director({ full_name: 'Siti Rahma', position: 'Komisaris', roles: ['commissioner', 'shareholder'], id_number: NIK_2, ownership_pct: 40 })],
      });
      const [budi, siti] = first.body.data.application.people as { id: string }[];
      const budiKtp = await attachOk(client, h, owner.id, 'ktp', budi!.id);
      const sitiKtp = await attachOk(client, h, owner.id, 'ktp', siti!.id);
      const deed = await attachOk(client, h, owner.id, 'akta_pendirian');
      const before = (await applicationRows(workspace.id))[0]!;
      const budiSealed = before.people.find((p) => p.id === budi!.id)!.id_number_sealed;
      expect(budiSealed).to.be.a('string');

      // Budi kept by id without id_number (renamed), Siti dropped, a new passport holder added.
      const second = await patchOk(client, h, {
        people: [
          { id: budi!.id, full_name: 'Budi Santoso Wijaya', position: 'Direktur Utama', roles: ['director'], id_type: 'nik', nationality: 'ID', ownership_pct: 70 },
          director({ full_name: 'John Smith', position: 'Direktur', roles: ['signer'], id_type: 'passport', id_number: PASSPORT_NO, nationality: 'SG', ownership_pct: null }),
        ],
      });
      const people = second.body.data.application.people as { id: string; full_name: string; id_number_last4: string; has_id_number: boolean; id_type: string }[];
      expect(people.map((p) => p.full_name)).to.deep.equal(['Budi Santoso Wijaya', 'John Smith']);
      expect(people[0]).to.include({ id: budi!.id, id_number_last4: NIK.slice(-4), has_id_number: true, id_type: 'nik' });
      expect(people[1]).to.include({ id_number_last4: PASSPORT_NO.slice(-4), has_id_number: true, id_type: 'passport' });
      expect(people[1]!.id).to.not.be.oneOf([budi!.id, siti!.id]);
      const after = (await applicationRows(workspace.id))[0]!;
      expect(after.people.find((p) => p.id === budi!.id)!.id_number_sealed).to.equal(budiSealed);

      // Documents: Budi's ktp and the deed stay, Siti's ktp is gone and its file unbound (the purge may take it).
      const docs = second.body.data.application.documents as { id: string; doc_type: string; person_id: string | null }[];
      const idOf = (view: { application: { documents: { id: string; doc_type: string; person_id: string | null }[] } }, type: string, person: string | null) =>
        view.application.documents.find((d) => d.doc_type === type && d.person_id === person)!.id;
      expect(docs.map((d) => d.id).sort()).to.deep.equal([idOf(budiKtp.body.data, 'ktp', budi!.id), idOf(deed.body.data, 'akta_pendirian', null)].sort());
      expect((await documentRows(after.id)).map((d) => d.upload_id).sort()).to.deep.equal([budiKtp.uploadId, deed.uploadId].sort());
      expect(await uploadRow(sitiKtp.uploadId)).to.include({ bound_at: null, bound_kind: null, bound_id: null });
      expect((await uploadRow(budiKtp.uploadId)).bound_at).to.be.instanceOf(Date);
      // Slots follow the list: John needs a passport, Siti no longer has a slot.
      expect(fullOf(second).slots.filter((s) => s.person_id).map((s) => s.key)).to.deep.equal([
        `ktp:${budi!.id}`,
        `passport:${people[1]!.id}`,
      ]);

      // Changing a kept person's id type drops the number that belonged to the other type.
      const third = await patchOk(client, h, { people: [{ id: budi!.id, full_name: 'Budi', position: 'Direktur', roles: ['director'], id_type: 'passport', nationality: 'ID' }] });
      expect(third.body.data.application.people[0]).to.include({ id: budi!.id, has_id_number: false, id_number_last4: null });
    });

    it('seals identity and account numbers at rest and answers only their last four digits', async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const res = await client
        .patch(KYB)
        .set(h)
        .set('Idempotency-Key', randomUUID())
        .send({ ...completeDraft(), people: [director(), director({ full_name: 'John Smith', id_type: 'passport', id_number: PASSPORT_NO, nationality: 'SG', ownership_pct: 10 })] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const answered = JSON.stringify(res.body);
      for (const secret of [NIK, ACCOUNT_NO, PASSPORT_NO]) expect(answered).to.not.include(secret);
      const a = fullOf(res).application;
      expect(a.bank).to.include({ account_number_last4: ACCOUNT_NO.slice(-4), has_account_number: true });
      expect(a.bank).to.not.have.any.keys('account_number', 'bank_account_number_sealed');
      expect(a.people.map((p) => [p.id_number_last4, p.has_id_number])).to.deep.equal([
        [NIK.slice(-4), true],
        [PASSPORT_NO.slice(-4), true],
      ]);
      for (const p of a.people) expect(p).to.not.have.any.keys('id_number', 'id_number_sealed');

      const [row] = await applicationRows(workspace.id);
      const stored = JSON.stringify(row);
      for (const secret of [NIK, ACCOUNT_NO, PASSPORT_NO]) expect(stored, secret).to.not.include(secret);
      expect(row!.bank_account_number_sealed).to.be.a('string').with.length.above(20);
      expect(row!.bank_account_last4).to.equal(ACCOUNT_NO.slice(-4));
      expect(row!.people.map((p) => p.id_number_last4)).to.deep.equal([NIK.slice(-4), PASSPORT_NO.slice(-4)]);
      for (const p of row!.people) expect(p.id_number_sealed).to.be.a('string').and.not.include(p.id_number_last4 === NIK.slice(-4) ? NIK : PASSPORT_NO);
      // Nowhere else either (idempotency record, events, audit...).
      const everything = await wholeDatabase();
      for (const secret of [NIK, ACCOUNT_NO, PASSPORT_NO]) expect(everything.includes(secret), secret).to.equal(false);
      // And a read answers the same last four, never more.
      const read = await client.get(KYB).set(h);
      for (const secret of [NIK, ACCOUNT_NO, PASSPORT_NO]) expect(JSON.stringify(read.body)).to.not.include(secret);
    });

    describe('validation: 400 INVALID_BODY with error.details, nothing saved', () => {
      const cases: [string, (ids: { person: string }) => unknown, string][] = [
        ['NIB of 12 digits for a pt', () => ({ company: { nib: '123456789012' } }), 'company.nib'],
        ['NIB with letters for a pt', () => ({ company: { nib: '12345678901AB' } }), 'company.nib'],
        ['a cv outside Indonesia', () => ({ company: { entity_type: 'cv', country_code: 'SG' } }), 'company.country_code'],
        ['foreign with country ID', () => ({ company: { entity_type: 'foreign' } }), 'company.country_code'],
        ['foreign with country ID given explicitly', () => ({ company: { entity_type: 'foreign', country_code: 'ID', nib: 'UEN-2020-1' } }), 'company.country_code'],
        ['a NIK of 15 digits', () => ({ people: [director({ id_number: NIK.slice(1) })] }), 'people.0.id_number'],
        ['a NIK with letters', () => ({ people: [director({ id_number: '31712345678901AB' })] }), 'people.0.id_number'],
        ['ownership over 100 in all', () => ({ people: [director({ ownership_pct: 60 }), director({ full_name: 'Siti Rahma', id_number: NIK_2, ownership_pct: 40.5 })] }), 'people'],
        ['an unknown person id', () => ({ people: [director({ id: randomUUID() })] }), 'people.0.id'],
        ['a person missing a name', () => ({ people: [{ ...director(), full_name: undefined }] }), 'people.0.full_name'],
        ['an unknown role', () => ({ people: [director({ roles: ['ceo'] })] }), 'people.0.roles.0'],
        ['an account number with letters', () => ({ bank: { account_number: '12345ABC' } }), 'bank.account_number'],
        ['an NPWP of 14 digits', () => ({ company: { npwp: '01234567890123' } }), 'company.npwp'],
        ['an unknown monthly volume', () => ({ company: { monthly_volume: 'lots' } }), 'company.monthly_volume'],
        ['more than 10 people', () => ({ people: Array.from({ length: 11 }, (_, i) => director({ full_name: `Person ${i}`, ownership_pct: 1 })) }), 'people'],
      ];

      it('refuses each broken rule with the field named, and changes nothing', async () => {
        const { workspace, owner } = await createWorkspace();
        const h = headersOf(await sessionOf(owner));
        const seeded = await patchOk(client, h, { people: [director({ ownership_pct: 10 })], company: { industry: 'Retail' } });
        const person = seeded.body.data.application.people[0].id as string;
        const before = JSON.stringify(await applicationRows(workspace.id));
        for (const [name, body, field] of cases) {
          const res = await client.patch(KYB).set(h).send(body({ person }) as object);
          expect(res.status, `${name}: ${JSON.stringify(res.body)}`).to.equal(400);
          expect(res.body.error.code, name).to.equal('INVALID_BODY');
          expect(res.body.error.details.fieldErrors, name).to.have.property(field).that.is.an('array').with.length.above(0);
        }
        // An empty body names no field: the whole body is wrong.
        const empty = await client.patch(KYB).set(h).send({});
        expect(empty.status).to.equal(400);
        expect(empty.body.error.code).to.equal('INVALID_BODY');
        expect(empty.body.error.details.formErrors).to.have.length(1);
        expect(empty.body.error.details.fieldErrors).to.deep.equal({});
        expect(JSON.stringify(await applicationRows(workspace.id))).to.equal(before);
      });

      it('accepts what the rules allow: a foreign entity abroad with its home registration number and no NPWP', async () => {
        const { owner } = await createWorkspace();
        const h = headersOf(await sessionOf(owner));
        const res = await patchOk(client, h, { company: { entity_type: 'foreign', country_code: 'sg', nib: 'UEN-201912345K', npwp: null } });
        expect(res.body.data.application).to.include({ entity_type: 'foreign', country_code: 'SG', nib: 'UEN-201912345K', npwp: null });
        const back = await patchOk(client, h, { company: { entity_type: 'pt', country_code: 'ID', nib: '9120001234567' } });
        expect(back.body.data.application).to.include({ entity_type: 'pt', country_code: 'ID', nib: '9120001234567' });
      });
    });

    it('answers 409 APPLICATION_LOCKED to PATCH, attach, remove and submit once submitted and once approved', async () => {
      const { workspace, owner, h, applicationId } = await submittedWorkspace(client);
      const docId = (await viewOf(client, h)).application.documents[0]!.id;
      const staff = await staffHeaders();
      const tryAll = async (when: string) => {
        const up = await createUploadRow(owner.id, { purpose: 'kyb' });
        const answers = [
          await client.patch(KYB).set(h).send({ company: { industry: 'Changed' } }),
          await client.post(`${KYB}/documents`).set(h).send({ upload_id: up.id, doc_type: 'akta_perubahan' }),
          await client.delete(`${KYB}/documents/${docId}`).set(h),
          await client.post(`${KYB}/submit`).set(h).send({}),
        ];
        expect(
          answers.map((r) => [r.status, codeOf(r)]),
          when,
        ).to.deep.equal(Array(4).fill([409, 'APPLICATION_LOCKED']));
        expect((await uploadRow(up.id)).bound_at, when).to.equal(null);
      };
      const snapshot = async () => JSON.stringify([await applicationRows(workspace.id), await documentRows(applicationId)]);

      const before = await snapshot();
      await tryAll('submitted');
      expect(await snapshot()).to.equal(before);

      expect((await review(client, staff, applicationId, 'approve', { risk_tier: 'standard' })).status).to.equal(200);
      const approved = await snapshot();
      await tryAll('approved');
      expect(await snapshot()).to.equal(approved);
      expect(await applicationRows(workspace.id)).to.have.length(1);
    });
  });

  describe('documents', () => {
    it('a save drops the documents no slot takes any more: a person whose id type changed, a company document the new entity type does not bring', async () => {
      const { owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const person = fullOf(await patchOk(client, h, completeDraft())).application.people[0]!;
      const sk = await attachOk(client, h, owner.id, 'sk_kemenkumham');
      const ktp = await attachOk(client, h, owner.id, 'ktp', person.id);
      await attachOk(client, h, owner.id, 'bank_proof');
      // The director now identifies with a passport: the ktp no longer fits a slot.
      const v1 = fullOf(await patchOk(client, h, { people: [director({ id: person.id, id_type: 'passport', id_number: PASSPORT_NO, nationality: 'SG' })] }));
      expect(v1.application.documents.map((d) => d.doc_type).sort()).to.deep.equal(['bank_proof', 'sk_kemenkumham']);
      expect(v1.progress.missing_documents).to.include(`passport:${person.id}`);
      expect(await db('uploads').where({ id: ktp.uploadId }).first()).to.include({ bound_kind: null, bound_at: null });
      // A ud brings no SK Kemenkumham: it goes too; the bank proof stays.
      const v2 = fullOf(await patchOk(client, h, { company: { entity_type: 'ud' } }));
      expect(v2.application.documents.map((d) => d.doc_type)).to.deep.equal(['bank_proof']);
      expect(await db('uploads').where({ id: sk.uploadId }).first()).to.include({ bound_kind: null, bound_at: null });
    });

    it('attach answers 201 with the full view; removal answers the view without it and releases the file', async () => {
      clock.set(new Date('2026-12-01T08:00:00.500Z'));
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const a = await attachOk(client, h, owner.id, 'akta_pendirian');
      expect(a.body.data.view).to.equal('full');
      expect(Object.keys(a.body.data).sort()).to.deep.equal([...FULL_KEYS].sort());
      const [doc] = a.body.data.application.documents;
      expect(doc).to.include({ doc_type: 'akta_pendirian', person_id: null, slot_key: 'akta_pendirian', mime: 'image/jpeg' });
      const app = (await applicationRows(workspace.id))[0]!;
      expect(await uploadRow(a.uploadId)).to.include({ bound_kind: 'kyb', bound_id: app.id });

      // An optional slot takes a document too.
      const opt = await attachOk(client, h, owner.id, 'akta_perubahan');
      // Both were attached in the same pinned instant: their order is not a rule.
      expect(fullOf(opt).application.documents.map((d) => d.doc_type).sort()).to.deep.equal(['akta_pendirian', 'akta_perubahan']);

      const link = await client.get(`${KYB}/documents/${doc.id}/url`).set(h);
      expect(link.status, JSON.stringify(link.body)).to.equal(200);
      // A 5-minute link signed for the caller: its expiry is the link's own (whole seconds).
      const url = new URL(link.body.data.url as string);
      expect(url.searchParams.get('u')).to.equal(owner.id);
      expect(Number(url.searchParams.get('exp'))).to.equal(Date.parse('2026-12-01T08:05:00.000Z') / 1000);
      expect(link.body.data.expires_at).to.equal('2026-12-01T08:05:00.000Z');

      const del = await client.delete(`${KYB}/documents/${doc.id}`).set(h);
      expect(del.status, JSON.stringify(del.body)).to.equal(200);
      expect(del.body.data.view).to.equal('full');
      expect(fullOf(del).application.documents.map((d) => d.doc_type)).to.deep.equal(['akta_perubahan']);
      expect(await documentRows(app.id)).to.have.length(1);
      expect(await uploadRow(a.uploadId)).to.include({ bound_at: null, bound_kind: null, bound_id: null });
      // Gone: removing or linking it again is 404.
      expect((await client.delete(`${KYB}/documents/${doc.id}`).set(h)).body.error.code).to.equal('NOT_FOUND');
      expect((await client.get(`${KYB}/documents/${doc.id}/url`).set(h)).status).to.equal(404);
      expect((await client.delete(`${KYB}/documents/not-a-uuid`).set(h)).status).to.equal(404);
    });

    it('ktp and passport need the person_id of a listed person, of the right id type; a doc type outside the slots is refused', async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const p = await patchOk(client, h, {
        people: [director(), director({ full_name: 'John Smith', id_type: 'passport', id_number: PASSPORT_NO, nationality: 'SG', ownership_pct: 10 })],
      });
      const [nik, pass] = p.body.data.application.people as { id: string }[];
      const refused: [string, string, string | undefined, string][] = [
        ['ktp without person_id', 'ktp', undefined, 'person_id'],
        ['passport without person_id', 'passport', undefined, 'person_id'],
        ['ktp of someone not listed', 'ktp', randomUUID(), 'person_id'],
        ['passport for a NIK holder', 'passport', nik!.id, 'doc_type'],
        ['ktp for a passport holder', 'ktp', pass!.id, 'doc_type'],
      ];
      for (const [name, docType, personId, field] of refused) {
        const r = await attach(client, h, owner.id, docType, personId);
        expect([r.status, r.body.error?.code], name).to.deep.equal([400, 'INVALID_BODY']);
        expect(r.body.error.details.fieldErrors, name).to.have.property(field);
        expect((await uploadRow(r.uploadId)).bound_at, name).to.equal(null);
      }
      // person_id on a company document is refused too.
      const up = await createUploadRow(owner.id, { purpose: 'kyb' });
      const extra = await client.post(`${KYB}/documents`).set(h).send({ upload_id: up.id, doc_type: 'bank_proof', person_id: nik!.id });
      expect([extra.status, extra.body.error?.code]).to.deep.equal([400, 'INVALID_BODY']);
      // A ud brings no SK Kemenkumham.
      await patchOk(client, h, { company: { entity_type: 'ud' } });
      const sk = await attach(client, h, owner.id, 'sk_kemenkumham');
      expect([sk.status, sk.body.error?.code]).to.deep.equal([400, 'INVALID_BODY']);
      expect(sk.body.error.details.fieldErrors).to.have.property('doc_type');
      const unknownType = await attach(client, h, owner.id, 'selfie');
      expect([unknownType.status, unknownType.body.error?.code]).to.deep.equal([400, 'INVALID_BODY']);
      expect(await documentRows((await applicationRows(workspace.id))[0]!.id)).to.deep.equal([]);

      // The right ones are taken.
      const ok1 = await attachOk(client, h, owner.id, 'ktp', nik!.id);
      const ok2 = await attachOk(client, h, owner.id, 'passport', pass!.id);
      expect(fullOf(ok2).application.documents.map((d) => d.slot_key).sort()).to.deep.equal([`ktp:${nik!.id}`, `passport:${pass!.id}`].sort());
      void ok1;
    });

    it("refuses someone else's upload (403 FILE_NOT_OWNED), an unknown one (404), an attached or non-KYB one (409 INVALID_STATE)", async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const admin = await addMember(workspace.id, 'admin');
      const { user: stranger } = await createUser();
      const send = (uploadId: string) => client.post(`${KYB}/documents`).set(h).send({ upload_id: uploadId, doc_type: 'bank_proof' });

      const theirs = await createUploadRow(stranger.id, { purpose: 'kyb' });
      const colleague = await createUploadRow(admin.user.id, { purpose: 'kyb' }); // even a fellow admin's: uploads are per user
      const escrowUpload = await createUploadRow(owner.id, { purpose: 'escrow' });
      const mine = await createUploadRow(owner.id, { purpose: 'kyb' });

      for (const [name, id, status, code] of [
        ["a stranger's", theirs.id, 403, 'FILE_NOT_OWNED'],
        ["a colleague's", colleague.id, 403, 'FILE_NOT_OWNED'],
        ['unknown', randomUUID(), 404, 'NOT_FOUND'],
        ['a non-KYB upload', escrowUpload.id, 409, 'INVALID_STATE'],
      ] as const) {
        const r = await send(id);
        expect([r.status, r.body.error?.code], name).to.deep.equal([status, code]);
      }
      expect((await send(mine.id)).status).to.equal(201);
      const again = await send(mine.id);
      expect([again.status, again.body.error?.code]).to.deep.equal([409, 'INVALID_STATE']);
      // Attached elsewhere: another workspace of the same owner cannot take it either.
      const other = await createWorkspace(owner);
      const elsewhere = await client.post(`${KYB}/documents`).set({ ...h, 'X-Enterprise-Account': other.workspace.id }).send({ upload_id: mine.id, doc_type: 'bank_proof' });
      expect([elsewhere.status, elsewhere.body.error?.code]).to.deep.equal([409, 'INVALID_STATE']);

      const app = (await applicationRows(workspace.id))[0]!;
      expect((await documentRows(app.id)).map((d) => d.upload_id)).to.deep.equal([mine.id]);
      for (const u of [theirs, colleague, escrowUpload]) expect((await uploadRow(u.id)).bound_at).to.equal(null);
    });

    it('holds at most 30 documents per version (409 INVALID_STATE), and takes at most 30 attach calls a minute per user (429)', async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const app = (await applicationRows(workspace.id))[0]!;
      await createUploadRows(owner.id, 30, 'kyb');
      const ids = (await db('uploads').where({ user_id: owner.id }).select<{ id: string }[]>('id')).map((u) => u.id);
      await db('kyb_documents').insert(ids.map((upload_id) => ({ application_id: app.id, upload_id, doc_type: 'akta_perubahan', person_id: null, created_by: owner.id, created_at: clock.now() })));
      const full = await attach(client, h, owner.id, 'bank_proof');
      expect([full.status, codeOf(full)]).to.deep.equal([409, 'INVALID_STATE']);
      expect((await uploadRow(full.uploadId)).bound_at).to.equal(null);
      expect(await documentRows(app.id)).to.have.length(30);

      // The attach limit counts every call (29 more here, refused or not); the next one is 429.
      const answers = await Promise.all(Array.from({ length: 29 }, () => client.post(`${KYB}/documents`).set(h).send({})));
      expect(answers.map((r) => r.status)).to.deep.equal(Array(29).fill(400));
      const over = await attach(client, h, owner.id, 'bank_proof');
      expect([over.status, codeOf(over)]).to.deep.equal([429, 'RATE_LIMITED']);
      expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
    });

    it('offers the slots of the entity type, and one required identity slot per person', async () => {
      const { owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const p = await patchOk(client, h, {
        people: [director(), director({ full_name: 'John Smith', roles: ['signer'], id_type: 'passport', id_number: PASSPORT_NO, nationality: 'SG', ownership_pct: null })],
      });
      const [nik, pass] = (p.body.data.application.people as { id: string }[]).map((x) => x.id);
      const people = [
        { key: `ktp:${nik}`, type: 'ktp', required: true, person_id: nik },
        { key: `passport:${pass}`, type: 'passport', required: true, person_id: pass },
      ];
      const company = (required: string[], optional: string[]) => [
        ...required.map((t) => ({ key: t, type: t, required: true, person_id: null })),
        ...optional.map((t) => ({ key: t, type: t, required: false, person_id: null })),
      ];
      const expected: [Record<string, unknown>, ReturnType<typeof company>][] = [
        [{ entity_type: 'pt' }, company(['akta_pendirian', 'sk_kemenkumham', 'bank_proof'], ['akta_perubahan'])],
        [{ entity_type: 'pt_perorangan' }, company(['akta_pendirian', 'sk_kemenkumham', 'bank_proof'], ['akta_perubahan'])],
        [{ entity_type: 'koperasi' }, company(['akta_pendirian', 'sk_kemenkumham', 'bank_proof'], ['akta_perubahan'])],
        [{ entity_type: 'cv' }, company(['akta_pendirian', 'bank_proof'], ['sk_kemenkumham', 'akta_perubahan'])],
        [{ entity_type: 'firma' }, company(['akta_pendirian', 'bank_proof'], ['sk_kemenkumham', 'akta_perubahan'])],
        [{ entity_type: 'ud' }, company(['bank_proof'], ['akta_pendirian'])],
        [{ entity_type: 'foreign', country_code: 'SG', nib: 'UEN-201912345K' }, company(['akta_pendirian', 'bank_proof'], ['akta_perubahan'])],
      ];
      for (const [c, slots] of expected) {
        const r = await patchOk(client, h, { company: { country_code: 'ID', nib: '1234567890123', ...c } });
        const got = r.body.data.slots as { key: string; type: string; required: boolean; person_id: string | null; label: string; hint: string }[];
        expect(
          got.map(({ key, type, required, person_id }) => ({ key, type, required, person_id })),
          String(c.entity_type),
        ).to.deep.equal([...slots, ...people]);
        for (const s of got) {
          expect(s.label).to.be.a('string').and.not.equal('');
          expect(s.hint).to.be.a('string').and.not.equal('');
        }
        // Required slots are what progress still misses (no documents yet).
        expect(r.body.data.progress.missing_documents, String(c.entity_type)).to.deep.equal([...slots, ...people].filter((s) => s.required).map((s) => s.key));
      }
      // No people, no identity slots.
      const none = await patchOk(client, h, { people: [] });
      expect(fullOf(none).slots.filter((s) => s.person_id)).to.deep.equal([]);
    });

    it('moves progress as fields and documents arrive, and back when a document goes', async () => {
      const { owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const progress = async (): Promise<FullView['progress']> => (await viewOf(client, h)).progress;
      const base = ['akta_pendirian', 'sk_kemenkumham', 'bank_proof'];
      expect(await progress()).to.deep.equal({ steps: { company: false, people: false, bank: false, documents: false }, done: 0, total: 4, missing_documents: base, complete: false });

      await patchOk(client, h, { company: { npwp: '012345678901234', address: 'Jl. Sudirman 1', industry: 'Retail' } });
      expect((await progress()).steps.company, 'no monthly volume yet').to.equal(false);
      await patchOk(client, h, { company: { monthly_volume: 'under_100m' } });
      expect(await progress()).to.deep.include({ steps: { company: true, people: false, bank: false, documents: false }, done: 1 });
      await patchOk(client, h, { company: { npwp: null } });
      expect((await progress()).steps.company, 'a pt needs its NPWP').to.equal(false);
      await patchOk(client, h, { company: { npwp: '012345678901234' } });

      // People: a person without an identity number, then one who is no director, then a complete director.
      const noNumber = await patchOk(client, h, { people: [{ ...director(), id_number: undefined }] });
      const pid = noNumber.body.data.application.people[0].id as string;
      expect(noNumber.body.data.progress.steps.people, 'no identity number').to.equal(false);
      expect(noNumber.body.data.progress.missing_documents).to.deep.equal([...base, `ktp:${pid}`]);
      const signer = await patchOk(client, h, { people: [{ ...director({ id: pid, roles: ['signer'] }) }] });
      expect(signer.body.data.progress.steps.people, 'no director').to.equal(false);
      const done2 = await patchOk(client, h, { people: [director({ id: pid })] });
      expect(done2.body.data.progress).to.deep.include({ steps: { company: true, people: true, bank: false, documents: false }, done: 2 });

      await patchOk(client, h, { bank: { bank_name: 'BCA', bank_account_holder: 'PT Contoh' } });
      expect((await progress()).steps.bank, 'no account number').to.equal(false);
      const bank = await patchOk(client, h, { bank: { account_number: ACCOUNT_NO } });
      expect(bank.body.data.progress).to.deep.include({ done: 3, complete: false });

      let last = bank;
      const missing = [...base, `ktp:${pid}`];
      for (const [t, person] of [['akta_pendirian'], ['sk_kemenkumham'], ['bank_proof'], ['ktp', pid]] as [string, string?][]) {
        last = await attachOk(client, h, owner.id, t, person);
        missing.shift();
        expect(last.body.data.progress.missing_documents, t).to.deep.equal(missing);
      }
      expect(last.body.data.progress).to.deep.equal({ steps: { company: true, people: true, bank: true, documents: true }, done: 4, total: 4, missing_documents: [], complete: true });

      const sk = fullOf(last).application.documents.find((d) => d.doc_type === 'sk_kemenkumham')!.id;
      const removed = await client.delete(`${KYB}/documents/${sk}`).set(h);
      expect(removed.body.data.progress).to.deep.include({ done: 3, missing_documents: ['sk_kemenkumham'], complete: false });

      // A foreign entity needs no NPWP and no SK.
      await patchOk(client, h, { company: { entity_type: 'foreign', country_code: 'SG', nib: 'UEN-1', npwp: null } });
      expect(await progress()).to.deep.include({ steps: { company: true, people: true, bank: true, documents: true }, complete: true });
    });
  });

  describe('POST /v1/enterprise/kyb/submit', () => {
    it('refuses an incomplete draft with 400 APPLICATION_INCOMPLETE naming what is missing, and changes nothing', async () => {
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      const bare = await client.post(`${KYB}/submit`).set(h).send({});
      expect([bare.status, bare.body.error?.code]).to.deep.equal([400, 'APPLICATION_INCOMPLETE']);
      expect(bare.body.error.missing).to.deep.equal({ steps: ['company', 'people', 'bank', 'documents'], documents: ['akta_pendirian', 'sk_kemenkumham', 'bank_proof'] });

      const p = await patchOk(client, h, completeDraft());
      const pid = p.body.data.application.people[0].id as string;
      await attachOk(client, h, owner.id, 'akta_pendirian');
      const noDocs = await client.post(`${KYB}/submit`).set(h).send({});
      expect([noDocs.status, noDocs.body.error?.code]).to.deep.equal([400, 'APPLICATION_INCOMPLETE']);
      expect(noDocs.body.error.missing).to.deep.equal({ steps: ['documents'], documents: ['sk_kemenkumham', 'bank_proof', `ktp:${pid}`] });

      await patchOk(client, h, { bank: { bank_name: 'BCA' }, people: [director({ id: pid, roles: ['signer'] })] });
      for (const t of ['sk_kemenkumham', 'bank_proof']) await attachOk(client, h, owner.id, t);
      await attachOk(client, h, owner.id, 'ktp', pid);
      const noDirector = await client.post(`${KYB}/submit`).set(h).send({});
      expect(noDirector.body.error.missing).to.deep.equal({ steps: ['people'], documents: [] });

      expect((await applicationRows(workspace.id)).map((r) => [r.version, r.status, r.submitted_at])).to.deep.equal([[1, 'draft', null]]);
      expect((await workspaceRow(workspace.id)).kyb_status).to.equal('not_started');
      expect(await db('workspace_events').where({ workspace_id: workspace.id, event: 'kyb.submitted' })).to.have.length(0);
    });

    it('submits a complete draft: submitted, workspace pending, due three weekdays later (Thursday to Tuesday)', async () => {
      const thursday = new Date('2026-12-03T10:15:00.000Z');
      expect(thursday.getUTCDay()).to.equal(4);
      clock.set(thursday);
      try {
        const { workspace, owner, h } = await completeWorkspace(client);
        const res = await client.post(`${KYB}/submit`).set(h).send({});
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const v = res.body.data;
        expect(v.view).to.equal('full');
        expect(v.application).to.include({ status: 'submitted', version: 1, submitted_at: '2026-12-03T10:15:00.000Z', decided_at: null });
        expect(v.review).to.deep.equal({ min_days: 1, max_days: 3, due_by: '2026-12-08T10:15:00.000Z' });
        expect(new Date(v.review.due_by).getUTCDay()).to.equal(2); // Tuesday
        expect(v.subject.kyb_status).to.equal('pending');
        expect(v.can_edit).to.equal(false);
        expect(v.history).to.deep.equal([{ version: 1, status: 'submitted', submitted_at: '2026-12-03T10:15:00.000Z', decided_at: null, decision_reason: null }]);
        expect((await viewOf(client, h)).review.due_by).to.equal('2026-12-08T10:15:00.000Z');

        expect((await workspaceRow(workspace.id)).kyb_status).to.equal('pending');
        const [row] = await applicationRows(workspace.id);
        expect(row).to.include({ status: 'submitted' });
        expect(row!.submitted_at!.toISOString()).to.equal('2026-12-03T10:15:00.000Z');
        const events = await db('workspace_events').where({ workspace_id: workspace.id, event: 'kyb.submitted' }).select<{ actor_id: string; livemode: boolean }[]>('*');
        expect(events.map((e) => [e.actor_id, e.livemode])).to.deep.equal([[owner.id, false]]);

        // A Friday submission is due the next Wednesday.
        clock.set(new Date('2026-12-04T23:30:00.000Z'));
        const friday = await completeWorkspace(client);
        const f = await client.post(`${KYB}/submit`).set(friday.h).send({});
        expect(f.body.data.review.due_by).to.equal('2026-12-09T23:30:00.000Z');
      } finally {
        clock.reset();
      }
    });
  });

  describe('authorisation', () => {
    it("a member of workspace A never reads or changes B's application", async () => {
      const a = await completeWorkspace(client);
      const b = await completeWorkspace(client);
      const bDocs = (await viewOf(client, b.h)).application.documents as { id: string }[];
      const bBefore = JSON.stringify([await applicationRows(b.workspace.id), await documentRows(b.applicationId)]);
      const asB = { ...a.h, 'X-Enterprise-Account': b.workspace.id };
      const up = await createUploadRow(a.owner.id, { purpose: 'kyb' });

      const tries = [
        await client.get(KYB).set(asB),
        await client.patch(KYB).set(asB).send({ company: { industry: 'Hijacked' } }),
        await client.post(`${KYB}/documents`).set(asB).send({ upload_id: up.id, doc_type: 'akta_perubahan' }),
        await client.delete(`${KYB}/documents/${bDocs[0]!.id}`).set(asB),
        await client.get(`${KYB}/documents/${bDocs[0]!.id}/url`).set(asB),
        await client.post(`${KYB}/submit`).set(asB).send({}),
      ];
      expect(tries.map((r) => [r.status, codeOf(r)])).to.deep.equal(Array(6).fill([403, 'NO_WORKSPACE']));

      // A's workspace key naming B is refused the same way.
      const aKey = await workspaceKey(a.workspace.id, { member: a.ownerMember, user: a.owner });
      const viaKey = await client.get(KYB).set(headersOf({ kind: 'workspace_key', key: aKey.key }, b.workspace.id));
      expect([viaKey.status, viaKey.body.error?.code]).to.deep.equal([403, 'NO_WORKSPACE']);

      // B's document ids through A's own routes name nothing.
      for (const d of bDocs) {
        const del = await client.delete(`${KYB}/documents/${d.id}`).set(a.h);
        expect([del.status, del.body.error?.code]).to.deep.equal([404, 'NOT_FOUND']);
        const link = await client.get(`${KYB}/documents/${d.id}/url`).set(a.h);
        expect([link.status, link.body.error?.code]).to.deep.equal([404, 'NOT_FOUND']);
      }
      // B's uploads cannot be attached to A's application either.
      const bUpload = await createUploadRow(b.owner.id, { purpose: 'kyb' });
      const steal = await client.post(`${KYB}/documents`).set(a.h).send({ upload_id: bUpload.id, doc_type: 'akta_perubahan' });
      expect([steal.status, steal.body.error?.code]).to.deep.equal([403, 'FILE_NOT_OWNED']);

      expect(JSON.stringify([await applicationRows(b.workspace.id), await documentRows(b.applicationId)])).to.equal(bBefore);
      expect((await viewOf(client, a.h)).application.documents).to.have.length(4);

      // Someone in both workspaces sees B with their role in B: a viewer there gets the status view and cannot edit.
      await addMember(b.workspace.id, 'viewer', a.owner);
      const viewerInB = await client.get(KYB).set(asB);
      expect(viewerInB.body.data.view).to.equal('status');
      const edit = await client.patch(KYB).set(asB).send({ company: { industry: 'Hijacked' } });
      expect([edit.status, edit.body.error?.code]).to.deep.equal([403, 'FORBIDDEN']);
      expect((await db('kyb_applications').where({ id: b.applicationId }).first<{ industry: string }>('industry')).industry).to.equal('Retail');
    });
  });
});

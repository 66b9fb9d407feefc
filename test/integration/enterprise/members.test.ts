/**
 * Members and invites, preferences, settings, notifications and counterparties
 * (enterprise spec 4.1, decision D7): owners first, only an owner grants or removes
 * owner, the last owner cannot leave (also when two owners remove each other at once),
 * workspace selection with X-Enterprise-Account, nobody reads another workspace's rows.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { createUser } from '../../factories/users.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, type Cred } from '../../factories/enterprise.js';
import { db } from '../../../shared/db.js';
import { clock } from '../../../shared/clock.js';
import { decryptSecret } from '../../../shared/crypto.js';

/** The id of the pending invite to `userId` (the invite's answer carries none: review R1). */
async function pendingInviteId(userId: string): Promise<string> {
  const row = await db('workspace_members').where({ user_id: userId, status: 'invited' }).orderBy('created_at', 'desc').first<{ id: string } | undefined>('id');
  if (!row) throw new Error('no pending invite');
  return row.id;
}

describe('enterprise members, settings, notifications, counterparties', () => {
  const client = api();

  it('invite, see it in /me, accept; accepting twice or someone else’s invite is 404 NOT_FOUND', async () => {
    const { workspace, owner } = await createWorkspace(undefined, 'Acme');
    const ownerS = await sessionOf(owner);
    const { user: invitee } = await createUser({ fullName: 'Ina Vitee' });
    const inv = await client.post('/v1/enterprise/members').set(headersOf(ownerS)).send({ email: invitee.email.toUpperCase(), role: 'finance' });
    expect(inv.status, JSON.stringify(inv.body)).to.equal(201);
    expect(inv.body.data).to.deep.equal({ email: invitee.email.toLowerCase(), role: 'finance', status: 'invited' });
    const invId = await pendingInviteId(invitee.id);
    // The list shows the invite by the address typed, with no name before acceptance.
    const listed = (await client.get('/v1/enterprise/members').set(headersOf(ownerS))).body.data as { id: string; user: { full_name: string | null } }[];
    expect(listed.find((m) => m.id === invId)!.user.full_name).to.equal(null);
    const inviteeS = await sessionOf(invitee);
    const me = await client.get('/v1/enterprise/me').set(headersOf(inviteeS));
    expect(me.body.data.invites).to.deep.equal([{ member_id: invId, display_name: 'Acme', role: 'finance', invited_by_name: owner.full_name }]);
    // An invite gives no access yet.
    expect((await client.get('/v1/enterprise/members').set(headersOf(inviteeS))).body.error.code).to.equal('NO_WORKSPACE');
    const stranger = await sessionOf((await createUser()).user);
    const stolen = await client.post(`/v1/enterprise/invites/${invId}/accept`).set(headersOf(stranger)).send({});
    expect(stolen.status).to.equal(404);
    expect(stolen.body.error.code).to.equal('NOT_FOUND');
    const acc = await client.post(`/v1/enterprise/invites/${invId}/accept`).set(headersOf(inviteeS)).send({});
    expect(acc.status, JSON.stringify(acc.body)).to.equal(200);
    expect(acc.body.data).to.deep.equal({ member_id: invId, account_id: workspace.id, role: 'finance' });
    expect((await client.post(`/v1/enterprise/invites/${invId}/accept`).set(headersOf(inviteeS)).send({})).status).to.equal(404);
    expect((await client.get('/v1/enterprise/members').set(headersOf(inviteeS))).status).to.equal(200);
    const names = (await db('workspace_events').where({ workspace_id: workspace.id }).orderBy('seq')).map((e: { event: string }) => e.event);
    expect(names).to.deep.equal(['workspace.created', 'member.invited', 'member.joined']);
    // The inviter hears about it.
    const notes = await client.get('/v1/enterprise/notifications').set(headersOf(ownerS));
    expect((notes.body.data as { type: string }[]).map((n) => n.type)).to.deep.equal(['member.joined']);
  });

  it('an invite answers alike whether or not an account uses the address, or has an invite pending (R1); a member is 409, a bad body 400', async () => {
    const { workspace, owner } = await createWorkspace();
    const s = await sessionOf(owner);
    const member = await addMember(workspace.id, 'viewer');
    const { user: known } = await createUser({ fullName: 'Kno Wn' });
    for (const email of ['nobody@example.com', known.email, known.email, 'NOBODY@example.com']) {
      const res = await client.post('/v1/enterprise/members').set(headersOf(s)).send({ email, role: 'viewer' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data).to.deep.equal({ email: email.toLowerCase(), role: 'viewer', status: 'invited' });
      expect(JSON.stringify(res.body)).to.not.include('Kno Wn');
    }
    // One invite stored (the known account's), one e-mail; nothing for the unknown address.
    expect(await countRows('workspace_members', { workspace_id: workspace.id, status: 'invited' })).to.equal(1);
    expect(await countRows('outbound_emails', { template: 'enterprise.member-invited' })).to.equal(1);
    expect((await client.post('/v1/enterprise/members').set(headersOf(s)).send({ email: member.user.email, role: 'viewer' })).body.error.code).to.equal('INVALID_STATE');
    const bad = await client.post('/v1/enterprise/members').set(headersOf(s)).send({ email: 'x', role: 'boss' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details.fieldErrors).to.have.keys('email', 'role');
  });

  it('lists members owners first, leaves removed members out, paginates', async () => {
    const { workspace, owner } = await createWorkspace();
    const a = await addMember(workspace.id, 'admin');
    const v = await addMember(workspace.id, 'viewer');
    const o2 = await addMember(workspace.id, 'owner');
    await db('workspace_members').where({ id: v.member.id }).update({ status: 'removed', removed_at: new Date() });
    const s = await sessionOf(a.user);
    const res = await client.get('/v1/enterprise/members?limit=2').set(headersOf(s));
    expect(res.status).to.equal(200);
    expect(res.body.pagination).to.deep.equal({ page: 1, limit: 2, total: 3, total_pages: 2 });
    expect((res.body.data as { user: { id: string } }[]).map((m) => m.user.id)).to.deep.equal([owner.id, o2.user.id]);
    const p2 = await client.get('/v1/enterprise/members?page=2&limit=2').set(headersOf(s));
    expect((p2.body.data as { user: { id: string } }[]).map((m) => m.user.id)).to.deep.equal([a.user.id]);
    expect((await client.get('/v1/enterprise/members?limit=51').set(headersOf(s))).body.error.code).to.equal('INVALID_QUERY');
  });

  it('only an owner grants or removes owner; admins manage the rest', async () => {
    const { workspace, owner, ownerMember } = await createWorkspace();
    const admin = await addMember(workspace.id, 'admin');
    const op = await addMember(workspace.id, 'operator');
    const as = await sessionOf(admin.user);
    const grant = await client.patch(`/v1/enterprise/members/${op.member.id}`).set(headersOf(as)).send({ role: 'owner' });
    expect(grant.status).to.equal(403);
    expect(grant.body.error.code).to.equal('FORBIDDEN');
    const demote = await client.patch(`/v1/enterprise/members/${ownerMember.id}`).set(headersOf(as)).send({ role: 'viewer' });
    expect(demote.body.error.code).to.equal('FORBIDDEN');
    expect((await client.delete(`/v1/enterprise/members/${ownerMember.id}`).set(headersOf(as))).body.error.code).to.equal('FORBIDDEN');
    const inviteOwner = await client.post('/v1/enterprise/members').set(headersOf(as)).send({ email: (await createUser()).user.email, role: 'owner' });
    expect(inviteOwner.body.error.code).to.equal('FORBIDDEN');
    const ok = await client.patch(`/v1/enterprise/members/${op.member.id}`).set(headersOf(as)).send({ role: 'finance' });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.role).to.equal('finance');
    const os = await sessionOf(owner);
    expect((await client.patch(`/v1/enterprise/members/${op.member.id}`).set(headersOf(os)).send({ role: 'owner' })).body.data.role).to.equal('owner');
    // The member was told.
    const notes = await db('enterprise_notifications').where({ user_id: op.user.id });
    expect(notes).to.have.length(2);
  });

  it('the last owner cannot leave or step down (409 INVALID_STATE); with two owners one may leave', async () => {
    const { workspace, owner, ownerMember } = await createWorkspace();
    const s = await sessionOf(owner);
    const leave = await client.delete(`/v1/enterprise/members/${ownerMember.id}`).set(headersOf(s));
    expect(leave.status).to.equal(409);
    expect(leave.body.error.code).to.equal('INVALID_STATE');
    expect((await client.patch(`/v1/enterprise/members/${ownerMember.id}`).set(headersOf(s)).send({ role: 'admin' })).body.error.code).to.equal('INVALID_STATE');
    const o2 = await addMember(workspace.id, 'owner');
    const left = await client.delete(`/v1/enterprise/members/${ownerMember.id}`).set(headersOf(s));
    expect(left.status).to.equal(200);
    expect(left.body.data).to.deep.equal({ id: ownerMember.id, removed: true });
    const gone = await client.get('/v1/enterprise/members').set(headersOf(s));
    expect(gone.body.error.code).to.equal('NO_WORKSPACE');
    expect(await countRows('workspace_members', { workspace_id: workspace.id, role: 'owner', status: 'active' })).to.equal(1);
    void o2;
  });

  it('two owners removing each other at once: exactly one succeeds, one owner stays', async () => {
    const { workspace, owner, ownerMember } = await createWorkspace();
    const o2 = await addMember(workspace.id, 'owner');
    const [a, b] = await Promise.all([
      client.delete(`/v1/enterprise/members/${o2.member.id}`).set(headersOf(await sessionOf(owner))),
      client.delete(`/v1/enterprise/members/${ownerMember.id}`).set(headersOf(await sessionOf(o2.user))),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).to.equal(200);
    expect(statuses[1]).to.be.oneOf([403, 409]);
    expect(await countRows('workspace_members', { workspace_id: workspace.id, role: 'owner', status: 'active' })).to.equal(1);
  });

  it('X-Enterprise-Account selects the workspace; without it the first joined is used', async () => {
    const { user } = await createUser();
    const first = await createWorkspace(user, 'First');
    const second = await createWorkspace(undefined, 'Second');
    await addMember(second.workspace.id, 'viewer', user);
    const outsider = await createWorkspace(undefined, 'Outsider');
    for (const cred of [await sessionOf(user), await personalKeyOf(user)] as Cred[]) {
      const def = await client.get('/v1/enterprise/settings').set(headersOf(cred));
      expect(def.status).to.equal(200);
      // Owner in First: may write there (personal keys only on non-dashboard routes).
      const cp = await client.post('/v1/enterprise/counterparties').set(headersOf(cred)).send({ name: 'In First' });
      expect(cp.status).to.equal(201);
      const asViewer = await client.post('/v1/enterprise/counterparties').set(headersOf(cred, second.workspace.id)).send({ name: 'In Second' });
      expect(asViewer.status).to.equal(403);
      expect(asViewer.body.error.code).to.equal('FORBIDDEN');
      const notMine = await client.get('/v1/enterprise/settings').set(headersOf(cred, outsider.workspace.id));
      expect(notMine.body.error.code).to.equal('NO_WORKSPACE');
      const bad = await client.get('/v1/enterprise/settings').set(headersOf(cred, 'ws_123'));
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('INVALID_ACCOUNT');
    }
    expect(await countRows('counterparties', { workspace_id: first.workspace.id })).to.equal(2);
    expect(await countRows('counterparties', { workspace_id: second.workspace.id })).to.equal(0);
    const none = await client.get('/v1/enterprise/members').set(headersOf(await sessionOf((await createUser()).user)));
    expect(none.status).to.equal(403);
    expect(none.body.error.code).to.equal('NO_WORKSPACE');
  });

  it('preferences, settings (with settings.updated), notifications read', async () => {
    const { workspace, owner } = await createWorkspace();
    const s = await sessionOf(owner);
    const pref = await client.patch('/v1/enterprise/members/me/preferences').set(headersOf(s)).send({ money: false });
    expect(pref.status).to.equal(200);
    expect(pref.body.data.notify).to.deep.equal({ email: true, approvals: true, money: false, reminders: true });
    expect((await client.patch('/v1/enterprise/members/me/preferences').set(headersOf(s)).send({})).status).to.equal(400);
    expect((await client.patch('/v1/enterprise/members/me/preferences').set(headersOf(s)).send({ money: 'no' })).status).to.equal(400);
    expect((await client.get('/v1/enterprise/me').set(headersOf(s))).body.data.membership.notify.money).to.equal(false);

    const set = await client.patch('/v1/enterprise/settings').set(headersOf(s)).send({ four_eyes_threshold: 25_000_000, watchlist: ['PT Risky'] });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body.data).to.include({ four_eyes_threshold: 25_000_000, dispute_sla_hours: 72 });
    expect(set.body.data.watchlist).to.deep.equal(['PT Risky']);
    expect((await client.get('/v1/enterprise/settings').set(headersOf(s))).body.data).to.deep.equal(set.body.data);
    for (const bad of [{}, { four_eyes_threshold: -1 }, { four_eyes_threshold: 1.5 }, { dispute_sla_hours: 0 }, { watchlist: 'x' }]) {
      expect((await client.patch('/v1/enterprise/settings').set(headersOf(s)).send(bad)).status).to.equal(400);
    }
    expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'settings.updated' })).to.equal(1);

    const m = await addMember(workspace.id, 'viewer');
    await client.patch(`/v1/enterprise/members/${m.member.id}`).set(headersOf(s)).send({ role: 'operator' });
    await client.patch(`/v1/enterprise/members/${m.member.id}`).set(headersOf(s)).send({ role: 'finance' });
    const ms = await sessionOf(m.user);
    const list = await client.get('/v1/enterprise/notifications').set(headersOf(ms));
    expect(list.body.data).to.have.length(2);
    expect(list.body.unread_count).to.equal(2);
    const one = list.body.data[0].id as string;
    const read = await client.post('/v1/enterprise/notifications/read').set(headersOf(ms)).send({ ids: [one] });
    expect(read.body.data).to.deep.equal({ updated: 1 });
    expect((await client.get('/v1/enterprise/notifications').set(headersOf(ms))).body.unread_count).to.equal(1);
    expect((await client.post('/v1/enterprise/notifications/read').set(headersOf(ms)).send({})).body.data).to.deep.equal({ updated: 1 });
    // The owner's notifications are their own.
    expect((await client.get('/v1/enterprise/notifications').set(headersOf(s))).body.data).to.have.length(0);
  });

  it("counterparties: create with D7 defaults, update, list; another workspace's counterparty is 404", async () => {
    const { workspace, owner } = await createWorkspace();
    const other = await createWorkspace();
    const s = await sessionOf(owner);
    const c = await client.post('/v1/enterprise/counterparties').set(headersOf(s)).send({ name: 'CV Sumber Rejeki' });
    expect(c.status).to.equal(201);
    expect(c.body.data).to.include({ name: 'CV Sumber Rejeki', country_code: 'ID', relationship: 'seller', kyb_status: 'not_started', email: null });
    const u = await client.patch(`/v1/enterprise/counterparties/${c.body.data.id}`).set(headersOf(s)).send({ relationship: 'buyer', email: 'AP@Sumber.id' });
    expect(u.status).to.equal(200);
    expect(u.body.data).to.include({ relationship: 'buyer', email: 'ap@sumber.id' });
    expect((await client.post('/v1/enterprise/counterparties').set(headersOf(s)).send({ name: 'X', relationship: 'partner' })).status).to.equal(400);
    const theirs = await client.post('/v1/enterprise/counterparties').set(headersOf(await sessionOf(other.owner))).send({ name: 'Theirs' });
    const cross = await client.patch(`/v1/enterprise/counterparties/${theirs.body.data.id}`).set(headersOf(s)).send({ name: 'Mine now' });
    expect(cross.status).to.equal(404);
    expect((await db('counterparties').where({ id: theirs.body.data.id }).first()).name).to.equal('Theirs');
    const list = await client.get('/v1/enterprise/counterparties').set(headersOf(s));
    expect((list.body.data as { id: string }[]).map((x) => x.id)).to.deep.equal([c.body.data.id]);
    expect(list.body.pagination.total).to.equal(1);
    const evs = (await db('workspace_events').where({ workspace_id: workspace.id }).orderBy('seq')).map((e: { event: string }) => e.event);
    expect(evs).to.deep.equal(['workspace.created', 'counterparty.created', 'counterparty.updated']);
  });

  it('member writes: 30 per minute', async () => {
    const { workspace, owner } = await createWorkspace();
    const s = await sessionOf(owner);
    const m = await addMember(workspace.id, 'viewer');
    for (let i = 0; i < 30; i += 1) {
      const r = await client.patch(`/v1/enterprise/members/${m.member.id}`).set(headersOf(s)).send({ role: i % 2 ? 'viewer' : 'operator' });
      expect(r.status).to.equal(200);
    }
    const res = await client.patch(`/v1/enterprise/members/${m.member.id}`).set(headersOf(s)).send({ role: 'finance' });
    expect(res.status).to.equal(429);
  });

  it('an invite expires after 7 days: not listed in /me, accept 404, the address may be invited again (R5)', async () => {
    const { owner } = await createWorkspace(undefined, 'Acme');
    const s = await sessionOf(owner);
    const { user: invitee } = await createUser();
    const inv = await client.post('/v1/enterprise/members').set(headersOf(s)).send({ email: invitee.email, role: 'viewer' });
    expect(inv.status).to.equal(201);
    const oldId = await pendingInviteId(invitee.id);
    clock.advance(7 * 24 * 3600_000 + 1000);
    const hI = headersOf(await sessionOf(invitee));
    expect((await client.get('/v1/enterprise/me').set(hI)).body.data.invites).to.deep.equal([]);
    const acc = await client.post(`/v1/enterprise/invites/${oldId}/accept`).set(hI).send({});
    expect(acc.status).to.equal(404);
    const again = await client.post('/v1/enterprise/members').set(headersOf(await sessionOf(owner))).send({ email: invitee.email, role: 'viewer' });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    const newId = await pendingInviteId(invitee.id);
    expect(newId).to.not.equal(oldId);
    expect((await client.post(`/v1/enterprise/invites/${newId}/accept`).set(hI).send({})).status).to.equal(200);
  });

  it("removing or demoting the inviter withdraws the invites they may no longer grant; accept re-reads the inviter (R5)", async () => {
    const { workspace, owner } = await createWorkspace(undefined, 'Acme');
    const hOwner = headersOf(await sessionOf(owner));
    const rogue = await addMember(workspace.id, 'admin');
    const hRogue = headersOf(await sessionOf(rogue.user));
    const { user: sock } = await createUser();
    const inv = await client.post('/v1/enterprise/members').set(hRogue).send({ email: sock.email, role: 'admin' });
    expect(inv.status).to.equal(201);
    const invId = await pendingInviteId(sock.id);
    expect((await client.delete(`/v1/enterprise/members/${rogue.member.id}`).set(hOwner)).status).to.equal(200);
    expect((await db('workspace_members').where({ id: invId }).first()).status).to.equal('removed');
    const hSock = headersOf(await sessionOf(sock));
    expect((await client.post(`/v1/enterprise/invites/${invId}/accept`).set(hSock).send({})).status).to.equal(404);

    // Demotion: an admin demoted to finance loses the invites he issued; an admin keeps his.
    const admin2 = await addMember(workspace.id, 'admin');
    const h2 = headersOf(await sessionOf(admin2.user));
    const { user: a } = await createUser();
    const invA = await client.post('/v1/enterprise/members').set(h2).send({ email: a.email, role: 'viewer' });
    expect(invA.status).to.equal(201);
    const invAId = await pendingInviteId(a.id);
    expect((await client.patch(`/v1/enterprise/members/${admin2.member.id}`).set(hOwner).send({ role: 'finance' })).status).to.equal(200);
    expect((await db('workspace_members').where({ id: invAId }).first()).status).to.equal('removed');

    // Accept re-reads the inviter: a row changed behind the service's back is still refused.
    const admin3 = await addMember(workspace.id, 'admin');
    const h3 = headersOf(await sessionOf(admin3.user));
    const { user: b } = await createUser();
    await client.post('/v1/enterprise/members').set(h3).send({ email: b.email, role: 'operator' });
    const invBId = await pendingInviteId(b.id);
    await db('workspace_members').where({ id: admin3.member.id }).update({ role: 'viewer' });
    expect((await client.post(`/v1/enterprise/invites/${invBId}/accept`).set(headersOf(await sessionOf(b))).send({})).status).to.equal(404);
  });

  it('member invites are capped per workspace per day, unknown addresses included (R1): 429 RATE_LIMITED with Retry-After', async () => {
    const { owner } = await createWorkspace();
    const h = headersOf(await sessionOf(owner));
    for (let i = 0; i < 20; i++) {
      const res = await client.post('/v1/enterprise/members').set(h).send({ email: `probe${i}@nowhere.example`, role: 'viewer' });
      expect(res.status, `${i} ${JSON.stringify(res.body)}`).to.equal(201);
    }
    const { user: real } = await createUser();
    const over = await client.post('/v1/enterprise/members').set(h).send({ email: real.email, role: 'viewer' });
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(over.headers['retry-after'])).to.be.within(3600, 86_400);
    expect(await countRows('workspace_members', { user_id: real.id })).to.equal(0);
    // Another workspace is not held back by this one's count.
    const other = await createWorkspace();
    expect((await client.post('/v1/enterprise/members').set(headersOf(await sessionOf(other.owner))).send({ email: real.email, role: 'viewer' })).status).to.equal(201);
  });

  it('one address receives at most 5 member invites a day from all workspaces together (R1)', async () => {
    const { user: target } = await createUser();
    for (let i = 0; i < 5; i++) {
      const { owner } = await createWorkspace();
      const res = await client.post('/v1/enterprise/members').set(headersOf(await sessionOf(owner))).send({ email: i % 2 ? target.email.toUpperCase() : target.email, role: 'viewer' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
    const { owner } = await createWorkspace();
    const over = await client.post('/v1/enterprise/members').set(headersOf(await sessionOf(owner))).send({ email: target.email, role: 'viewer' });
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(over.headers['retry-after'])).to.be.greaterThan(0);
    expect(await countRows('workspace_members', { user_id: target.id, status: 'invited' })).to.equal(5);
  });

  it("the invite e-mail sets the workspace's and the inviter's names in as defanged plain text (R1)", async () => {
    const { workspace, owner } = await createWorkspace();
    await db('workspaces').where({ id: workspace.id }).update({ display_name: 'Acme\r\nBcc: x@evil.example https://evil.example/login' });
    await db('users').where({ id: owner.id }).update({ full_name: 'Support <support@evil.example> www.evil.example' });
    const { user: invitee } = await createUser();
    const res = await client.post('/v1/enterprise/members').set(headersOf(await sessionOf(owner))).send({ email: invitee.email, role: 'viewer' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const mail = await db('outbound_emails').where({ user_id: invitee.id, template: 'enterprise.member-invited' }).first<{ subject: string; body_sealed: string }>();
    const text = `${mail.subject}\n${decryptSecret(mail.body_sealed)}`;
    for (const bad of ['evil.example', '@evil', 'https://', 'Bcc:', '<support']) expect(text, bad).to.not.include(bad);
    expect(mail.subject).to.not.match(/[\r\n]/);
    expect(text).to.include('Acme Bcc x evil example https evil example login');
    expect(text).to.include('Support support evil example www evil example');
  });
});

/**
 * Four-eyes for milestones not in rupiah (issue 42 point 4; decision 0023): the threshold is
 * rupiah and no rate is set, so a USD milestone needs two different approvers whatever its
 * amount; an IDR milestone below the threshold still needs one.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { activateVia, createDealVia, dealBody, fundVia } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { approvalWorld, decideOk, milestoneStatus, slotRows, submitVia, THRESHOLD } from './support.js';

describe('approvals: four-eyes for a milestone in another currency (decision 0023)', () => {
  const client = api();

  for (const [currency, required] of [
    ['USD', 2],
    ['IDR', 1],
  ] as const) {
    it(`${currency} 10,000, far below the rupiah threshold: ${required} approver(s)`, async () => {
      const w = await approvalWorld(client);
      const made = await createDealVia(client, w.h.owner, dealBody(w.cpId, [10_000], { currency }));
      expect(made.milestones[0]!.approvals_required).to.equal(required);
      const d = await activateVia(client, w.h.owner, made.deal.id);
      expect(d.milestones[0]!.approvals_required).to.equal(required);
      const mid = d.milestones[0]!.id;
      await fundVia(client, w.h.finance, d.deal.id, mid);
      await submitVia(client, w.h.operator, d.deal.id, mid);
      expect((await slotRows(mid)).length).to.equal(required);

      const first = await decideOk(client, w.h.finance, mid);
      expect(first.item.approvals_done).to.equal(1);
      if (required === 1) {
        expect(await milestoneStatus(mid)).to.equal('approved');
        return;
      }
      expect(await milestoneStatus(mid)).to.equal('evidence_submitted');
      // Waiting for its second approver, it is a high-value milestone on the overview (fail-safe too).
      clock.advance(16_000);
      const overview = await client.get('/v1/enterprise/overview').set(w.h.viewer);
      const alerts = (overview.body.data.alerts as { kind: string; milestone_id: string | null; detail: string }[]).filter((a) => a.kind === 'high_value_pending');
      expect(alerts.map((a) => [a.milestone_id, /not in rupiah: always four-eyes/.test(a.detail)])).to.deep.equal([[mid, true]]);
      await decideOk(client, w.finance2.h, mid);
      expect(await milestoneStatus(mid)).to.equal('approved');
    });
  }

  it('a USD milestone added to a draft deal, and one whose amount is edited, need two as well', async () => {
    const w = await approvalWorld(client);
    const made = await createDealVia(client, w.h.owner, dealBody(w.cpId, [THRESHOLD * 2], { currency: 'USD' }));
    const added = await client.post(`/v1/enterprise/deals/${made.deal.id}/milestones`).set(w.h.owner).send({ title: 'Tambahan', amount: 10_000 });
    expect(added.status, JSON.stringify(added.body)).to.be.oneOf([200, 201]);
    const ms = added.body.data.milestones as { id: string; amount: number; approvals_required: number }[];
    expect(ms.map((m) => m.approvals_required)).to.deep.equal([2, 2]);
    const patched = await client.patch(`/v1/enterprise/deals/${made.deal.id}/milestones/${ms[0]!.id}`).set(w.h.owner).send({ amount: 10_000 });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect((patched.body.data.milestones as { approvals_required: number }[]).map((m) => m.approvals_required)).to.deep.equal([2, 2]);
  });
});

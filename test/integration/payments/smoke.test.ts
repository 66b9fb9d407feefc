import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, sandboxCallback } from '../../factories/payments.js';
import { db } from '../../../shared/db.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';

describe('payments smoke', () => {
  it('pay with the sandbox, callback, worker: escrow paid, surcharge to gateway fees', async () => {
    await createGateway({ provider: 'sandbox', feePercent: '0.7' });
    const { escrow, buyer } = await createEscrow({ amount: 150_000 });
    const key = await issueKey(buyer.id);
    const client = api();
    const methods = await client.get('/api/gateways/available-methods');
    expect(methods.status).to.equal(200);
    expect(methods.body.data[0]).to.deep.include({ provider: 'sandbox', fee_percent: 0.7, fee_fixed: 0, is_manual: false });
    const paid = await client.post(`/api/escrows/${escrow.id}/pay`).set('Authorization', `Bearer ${key}`).send({ method: 'qris' });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(201);
    expect(paid.body.data).to.deep.include({ amount: 151_050, escrow_amount: 150_000, surcharge: 1050, provider: 'sandbox', method: 'qris' });
    const order = paid.body.data.gateway_order_id as string;
    const status1 = await client.get(`/api/escrows/${escrow.id}/payment-status`).set('Authorization', `Bearer ${key}`);
    expect(status1.body.data).to.deep.include({ status: 'pending', amount: '151050' });

    const cb = sandboxCallback(order, 'paid', 151_050);
    const res = await client.post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const forged = await client.post('/api/webhooks/ipn').set('Content-Type', 'application/json').set('X-Sandbox-Signature', '0'.repeat(64)).send(cb.body);
    expect(forged.status).to.equal(403);
    const dup = await client.post('/api/webhooks/universal').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body);
    expect(dup.body.data.duplicate).to.equal(true);
    const ran = await runJobs();
    expect(ran.filter((j) => j.error)).to.deep.equal([]);
    const e = (await db('escrows').where({ id: escrow.id }).first()) as { status: string };
    expect(e.status).to.equal('paid');
    const status2 = await client.get(`/api/escrows/${escrow.id}/payment-status`).set('Authorization', `Bearer ${key}`);
    expect(status2.body.data.status).to.equal('paid');
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(1050);
    expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(150_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });
});

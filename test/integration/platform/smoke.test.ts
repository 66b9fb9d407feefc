import { expect } from 'chai';
import { api } from '../../helpers/app.js';

describe('platform smoke', () => {
  it('answers /healthz with the envelope', async () => {
    const res = await api().get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ success: true, data: { status: 'ok' } });
  });
});

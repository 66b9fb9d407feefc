import { expect } from 'chai';
import { formatAccessLine } from '../../../shared/logger.js';

describe('platform: the access log line', () => {
  it('escapes caller-supplied values: a forged address or path cannot break the line or add fields', () => {
    const line = formatAccessLine(
      {
        requestId: 'req-1',
        method: 'GET',
        path: '/v1/x"}\n{"level":60,"msg":"forged',
        route: 'unmatched',
        status: 404,
        ms: 1.5,
        ip: '1.2.3.4","user_id":"admin"}\n{"level":60,"msg":"forged',
        userId: undefined,
      },
      0,
    );
    expect(line.endsWith('\n')).to.equal(true);
    expect(line.slice(0, -1)).to.not.include('\n');
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed.ip).to.equal('1.2.3.4","user_id":"admin"}\n{"level":60,"msg":"forged');
    expect(parsed).to.not.have.property('user_id');
    expect(parsed.level).to.equal(30);
    expect(parsed.msg).to.equal('request');
  });
});

import { expect } from 'chai';
import { accessBatch, accessLog, accessStream, flushAccessLines, formatAccessLine, logger } from '../../../shared/logger.js';

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

describe('platform: the access log keeps KYB link tokens out (review R6)', () => {
  const token = '0b5f8f6e-3c1d-4a7e-9f00-1234567890ab.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde';
  const lineFor = (path: string): { path: string; raw: string } => {
    const raw = formatAccessLine({ requestId: 'r', method: 'GET', path, route: '/v1/kyb/invite/:token', status: 200, ms: 1, ip: '1.2.3.4', userId: undefined }, 0);
    return { path: (JSON.parse(raw) as { path: string }).path, raw };
  };

  it('redacts the token of the API link path and keeps the route shape', () => {
    const { path, raw } = lineFor(`/v1/kyb/invite/${token}`);
    expect(raw).to.not.include(token);
    expect(raw).to.not.include(token.split('.')[1]!);
    expect(path).to.equal('/v1/kyb/invite/:token');
  });

  it('redacts it under the link sub-routes (documents, uploads, submit)', () => {
    const { path, raw } = lineFor(`/v1/kyb/invite/${token}/documents/0b5f8f6e-3c1d-4a7e-9f00-000000000001/url`);
    expect(raw).to.not.include(token);
    expect(path).to.equal('/v1/kyb/invite/:token/documents/0b5f8f6e-3c1d-4a7e-9f00-000000000001/url');
  });

  it('redacts the dashboard path, any case and an encoded slash', () => {
    expect(lineFor(`/kyb/invite/${token}`).path).to.equal('/kyb/invite/:token');
    expect(lineFor(`/V1/KYB/Invite/${token}`).raw).to.not.include(token);
    expect(lineFor(`/v1/kyb%2Finvite%2F${token}`).raw).to.not.include(token.split('.')[1]!);
  });

  it('leaves other paths as they are', () => {
    expect(lineFor('/v1/enterprise/invites/0b5f8f6e-3c1d-4a7e-9f00-1234567890ab/accept').path).to.equal(
      '/v1/enterprise/invites/0b5f8f6e-3c1d-4a7e-9f00-1234567890ab/accept',
    );
    expect(lineFor('/v1/deals').path).to.equal('/v1/deals');
  });
});

describe('platform: access lines go out in batches', () => {
  const line = { requestId: 'r', method: 'GET', path: '/v1/auth/me', route: '/v1/auth/me', status: 200, ms: 1, ip: '127.0.0.1', userId: undefined };
  const stream = accessStream as unknown as { write: (s: string) => unknown };
  const saved = { write: stream.write, level: logger.level, ...accessBatch };
  let writes: string[];

  beforeEach(() => {
    flushAccessLines();
    writes = [];
    stream.write = (s: string) => writes.push(s);
    logger.level = 'info';
  });
  afterEach(() => {
    flushAccessLines();
    stream.write = saved.write;
    logger.level = saved.level;
    Object.assign(accessBatch, { chars: saved.chars, ms: saved.ms });
  });

  it('holds lines until flushed, then writes them as one string, in order', () => {
    accessLog({ ...line, requestId: 'a' });
    accessLog({ ...line, requestId: 'b' });
    expect(writes).to.deep.equal([]);
    flushAccessLines();
    expect(writes).to.have.length(1);
    expect(writes[0]!.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { request_id: string }).request_id)).to.deep.equal(['a', 'b']);
    flushAccessLines();
    expect(writes).to.have.length(1);
  });

  it('writes at once when the batch reaches its size, and by itself after its delay', async () => {
    const one = formatAccessLine(line, 0).length;
    accessBatch.chars = one * 3;
    accessLog(line);
    accessLog(line);
    expect(writes).to.have.length(0);
    accessLog(line);
    expect(writes).to.have.length(1);
    accessBatch.ms = 1;
    accessLog(line);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(writes).to.have.length(2);
  });

  it('writes nothing below level info', () => {
    logger.level = 'warn';
    accessLog(line);
    flushAccessLines();
    expect(writes).to.deep.equal([]);
  });
});

import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Response } from 'supertest';
import { config } from '../../../shared/config.js';
import { redis as sharedRedis } from '../../../shared/redis.js';
import { PROBE_RATE_RULE, probeApi } from '../../helpers/platform-probe-router.js';

describe('platform: rate limiting', () => {
  const connections: Redis[] = [];
  const savedTrustProxy = config.trustProxy;

  function connection(): Redis {
    const r = new Redis(config.redisUrl);
    connections.push(r);
    return r;
  }

  afterEach(async () => {
    config.trustProxy = savedTrustProxy;
    await Promise.all(connections.splice(0).map((r) => r.quit()));
  });

  function expectLimited(res: Response): void {
    expect(res.status).to.equal(429);
    expect(res.body.success).to.equal(false);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
    expect(res.body.error.message).to.be.a('string');
    const retryAfter = res.headers['retry-after'];
    expect(retryAfter).to.match(/^\d+$/);
    expect(Number(retryAfter)).to.be.within(1, PROBE_RATE_RULE.durationSeconds);
    expect(res.body.error.retry_after).to.equal(Number(retryAfter));
  }

  it('shares one limit between two app instances over one Redis: the 4th request is 429 RATE_LIMITED', async () => {
    const appA = probeApi({ redis: connection() });
    const appB = probeApi({ redis: connection() });
    await appA.get('/test/limited').expect(200);
    await appB.get('/test/limited').expect(200);
    await appA.get('/test/limited').expect(200);
    expectLimited(await appB.get('/test/limited'));
    expectLimited(await appA.get('/test/limited'));
    // A third copy, started later with its own connection, sees the same counter.
    expectLimited(await probeApi({ redis: connection() }).get('/test/limited'));

    // The counter lives in Redis (not in process memory): clearing Redis clears the limit.
    await sharedRedis.flushdb();
    await appB.get('/test/limited').expect(200);
  });

  it('does not count routes without the rule', async () => {
    const app = probeApi({ redis: connection() });
    for (let i = 0; i < 3; i++) await app.get('/test/limited').expect(200);
    for (let i = 0; i < 5; i++) await app.get('/test/envelope').expect(200);
    expectLimited(await app.get('/test/limited'));
  });

  describe('TRUST_PROXY', () => {
    it('off: the client address ignores X-Forwarded-For, so varying it does not escape the limit', async () => {
      config.trustProxy = false;
      const app = probeApi({ redis: connection() });
      const plain = await app.get('/test/ip').expect(200);
      const spoofed = await app.get('/test/ip').set('X-Forwarded-For', '203.0.113.7').expect(200);
      expect(spoofed.body.data.ip).to.equal(plain.body.data.ip);
      expect(spoofed.body.data.ip).to.not.equal('203.0.113.7');

      const other = probeApi({ redis: connection() });
      await app.get('/test/limited').set('X-Forwarded-For', '198.51.100.1').expect(200);
      await other.get('/test/limited').set('X-Forwarded-For', '198.51.100.2').expect(200);
      await app.get('/test/limited').set('X-Forwarded-For', '198.51.100.3').expect(200);
      expectLimited(await other.get('/test/limited').set('X-Forwarded-For', '198.51.100.4'));
    });

    it('on: the client address is the last X-Forwarded-For hop; separate clients are counted separately', async () => {
      config.trustProxy = true;
      const app = probeApi({ redis: connection() });
      const one = await app.get('/test/ip').set('X-Forwarded-For', '203.0.113.7').expect(200);
      expect(one.body.data.ip).to.equal('203.0.113.7');
      // A client-supplied hop in front of the proxy's own is not trusted.
      const chained = await app.get('/test/ip').set('X-Forwarded-For', '10.9.9.9, 203.0.113.8').expect(200);
      expect(chained.body.data.ip).to.equal('203.0.113.8');

      for (let i = 0; i < 3; i++) await app.get('/test/limited').set('X-Forwarded-For', '198.51.100.1').expect(200);
      expectLimited(await app.get('/test/limited').set('X-Forwarded-For', '198.51.100.1'));
      // Spoofing an extra hop does not give the same client a fresh counter.
      expectLimited(await app.get('/test/limited').set('X-Forwarded-For', '1.2.3.4, 198.51.100.1'));
      // Another client behind the same proxy still has its own budget.
      await app.get('/test/limited').set('X-Forwarded-For', '198.51.100.2').expect(200);
    });
  });
});

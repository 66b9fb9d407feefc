import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.js';

describe('config', () => {
  it('has working defaults for a local run', () => {
    const c = loadConfig({});
    expect(c.port).to.equal(3000);
    expect(c.sandboxMode).to.equal(true);
    expect(c.trustProxy).to.equal(false);
    expect(c.sessionCookieSecure).to.equal(false);
    expect(c.encryptionKey.length).to.equal(32);
    expect(c.argon2MemoryKib).to.be.at.least(19456);
    expect(c.argon2Passes).to.be.at.least(2);
  });

  it('names the variable when a value is invalid', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).to.throw(ConfigError, /PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x/y' })).to.throw(ConfigError, /DATABASE_URL/);
    expect(() => loadConfig({ TRUST_PROXY: 'maybe' })).to.throw(ConfigError, /TRUST_PROXY/);
    expect(() => loadConfig({ ARGON2_MEMORY_KIB: '1024' })).to.throw(ConfigError, /ARGON2_MEMORY_KIB/);
    expect(() => loadConfig({ ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') })).to.throw(ConfigError, /ENCRYPTION_KEY/);
  });

  it('refuses production without an encryption key, the bot check or a metrics token, or with the sandbox on', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const guards = { TURNSTILE_SECRET_KEY: 'turnstile-secret', METRICS_TOKEN: 'metrics-token' };
    expect(() => loadConfig({ NODE_ENV: 'production', ...guards })).to.throw(ConfigError, /ENCRYPTION_KEY/);
    expect(() => loadConfig({ NODE_ENV: 'production', ...guards, ENCRYPTION_KEY: key, SANDBOX_MODE: 'true' })).to.throw(ConfigError, /SANDBOX_MODE/);
    expect(() => loadConfig({ NODE_ENV: 'production', ENCRYPTION_KEY: key, METRICS_TOKEN: 'm' })).to.throw(ConfigError, /TURNSTILE_SECRET_KEY/);
    expect(() => loadConfig({ NODE_ENV: 'production', ENCRYPTION_KEY: key, TURNSTILE_SECRET_KEY: 't' })).to.throw(ConfigError, /METRICS_TOKEN/);
    const prod = loadConfig({ NODE_ENV: 'production', ...guards, ENCRYPTION_KEY: key });
    expect(prod.sandboxMode).to.equal(false);
    expect(prod.sessionCookieSecure).to.equal(true);
  });

  it('turns the Secure cookie flag on for an https base URL and off on request', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.id' }).sessionCookieSecure).to.equal(true);
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.id', SESSION_COOKIE_SECURE: 'false' }).sessionCookieSecure).to.equal(false);
  });

  it('reads the worker queue selection', () => {
    expect(loadConfig({ WORKER_QUEUES: 'mail, timers' }).workerQueues).to.deep.equal(['mail', 'timers']);
  });
});

/** A fake Turnstile siteverify server on loopback: accepts exactly the token `pass`. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { config } from '../../shared/config.js';

export const GOOD_TOKEN = 'pass';

export class FakeTurnstile {
  readonly requests: URLSearchParams[] = [];
  private server: Server | null = null;
  private saved = { url: config.turnstileVerifyUrl, secret: config.turnstileSecretKey, site: config.turnstileSiteKey };

  /** Starts the server and turns the bot check on (secret configured, URL pointed here). */
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        this.requests.push(form);
        const success = form.get('secret') === 'test-secret' && form.get('response') === GOOD_TOKEN;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ success, 'error-codes': success ? [] : ['invalid-input-response'] }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.saved = { url: config.turnstileVerifyUrl, secret: config.turnstileSecretKey, site: config.turnstileSiteKey };
    config.turnstileVerifyUrl = `http://127.0.0.1:${port}/siteverify`;
    config.turnstileSecretKey = 'test-secret';
    config.turnstileSiteKey = 'test-site-key';
  }

  async stop(): Promise<void> {
    config.turnstileVerifyUrl = this.saved.url;
    config.turnstileSecretKey = this.saved.secret;
    config.turnstileSiteKey = this.saved.site;
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}

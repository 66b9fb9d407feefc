/** A Binderbyte-style courier tracking upstream on loopback, with switchable behaviour. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trackingSettings } from '../../shared/tracking/settings.js';

export type CourierMode = 'up' | 'down' | 'slow' | 'garbage' | 'not-found';

export class FakeCourier {
  mode: CourierMode = 'up';
  readonly requests: URL[] = [];
  private server: Server | null = null;
  private saved = { ...trackingSettings };
  /** History the upstream returns (oldest first, as some couriers send it). */
  history = [
    { date: '2026-11-20 09:00:00', desc: 'Paket diterima di gudang <Jakarta>', location: 'JAKARTA' },
    { date: '2026-11-21 14:30:00', desc: 'Paket dalam perjalanan', location: 'BANDUNG' },
    { date: '2026-11-22 10:15:00', desc: 'Paket diterima oleh yang bersangkutan', location: 'BANDUNG' },
  ];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      this.requests.push(url);
      if (this.mode === 'down') return void res.writeHead(503).end('{"status":503}');
      if (this.mode === 'slow') return void setTimeout(() => res.writeHead(200).end('{}'), 2_000).unref();
      if (this.mode === 'garbage') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('<html>not json');
      if (this.mode === 'not-found' || url.searchParams.get('api_key') !== 'test-key') {
        return void res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"status":400,"message":"Data not found"}');
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          status: 200,
          message: 'Successfully tracked package',
          data: {
            summary: { awb: url.searchParams.get('awb'), courier: url.searchParams.get('courier'), status: 'DELIVERED' },
            detail: { origin: 'JAKARTA', destination: 'BANDUNG', shipper: 'TOKO', receiver: 'BUDI' },
            history: this.history,
          },
        }),
      );
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.saved = { ...trackingSettings };
    trackingSettings.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    trackingSettings.apiKey = 'test-key';
    trackingSettings.timeoutMs = 300;
  }

  async stop(): Promise<void> {
    Object.assign(trackingSettings, this.saved);
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server = null;
  }
}

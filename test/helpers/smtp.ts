/** A real SMTP server on loopback that keeps every message it receives (tests read the codes). */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { config } from '../../shared/config.js';
import { closeMailTransport } from '../../shared/mail/transport.js';

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parse(raw: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  let body = raw.slice(split + 4);
  const subject = /^Subject: (.*)$/im.exec(head)?.[1]?.trim() ?? '';
  const encoding = /^Content-Transfer-Encoding: (.*)$/im.exec(head)?.[1]?.trim().toLowerCase();
  if (encoding === 'quoted-printable') body = decodeQuotedPrintable(body);
  if (encoding === 'base64') body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { to, subject, text: body, raw };
}

export class MailSink {
  readonly messages: ReceivedMail[] = [];
  private server: SMTPServer | null = null;
  private previousUrl = config.smtpUrl;

  /** Starts the server and points the mail transport at it. */
  async start(): Promise<void> {
    this.server = new SMTPServer({
      secure: false,
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const to = session.envelope.rcptTo.map((r) => r.address);
          this.messages.push(parse(Buffer.concat(chunks).toString('utf8'), to));
          callback();
        });
      },
    });
    // A client that disappears mid-session (a worker killed by npm run chaos) is not the sink's failure.
    this.server.on('error', () => undefined);
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.server.address() as AddressInfo;
    this.previousUrl = config.smtpUrl;
    config.smtpUrl = `smtp://127.0.0.1:${port}`;
    closeMailTransport();
  }

  async stop(): Promise<void> {
    config.smtpUrl = this.previousUrl;
    closeMailTransport();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  clear(): void {
    this.messages.length = 0;
  }

  /** Messages sent to `address`, oldest first. */
  to(address: string): ReceivedMail[] {
    return this.messages.filter((m) => m.to.includes(address.toLowerCase()));
  }

  /** The 6-digit code in the newest message to `address`. */
  lastCode(address: string): string {
    const mail = this.to(address).at(-1);
    const code = mail && /\b(\d{6})\b/.exec(mail.text)?.[1];
    if (!code) throw new Error(`no code mailed to ${address}`);
    return code;
  }
}

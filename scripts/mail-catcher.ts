/**
 * Local runs only: an SMTP server on loopback that stores every message under
 * .data/mail/ (one .eml file each) and prints a line per message, so sign-up codes and
 * reset links can be read without a real mail server. `npm start` runs it when SMTP_URL
 * is not set.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SMTPServer } from 'smtp-server';

const port = Number(process.env.MAIL_CATCHER_PORT ?? 1025);
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.data', 'mail');
mkdirSync(dir, { recursive: true });

const server = new SMTPServer({
  secure: false,
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const subject = /^Subject: (.*)$/im.exec(raw)?.[1] ?? '(no subject)';
      const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.eml`);
      writeFileSync(file, raw);
      const to = session.envelope.rcptTo.map((r) => r.address).join(', ');
      console.log(`[mail] to ${to}: ${subject} -> ${path.relative(process.cwd(), file)}`);
      callback();
    });
  },
});

server.listen(port, '127.0.0.1', () => console.log(`[mail] catching e-mail on smtp://127.0.0.1:${port} into .data/mail/`));
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

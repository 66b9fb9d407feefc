import nodemailer, { type Transporter } from 'nodemailer';
import { config } from '../config.js';

let transport: Transporter | null = null;

/** The SMTP transport (SMTP_URL). Created on first use. */
export function mailTransport(): Transporter {
  transport ??= nodemailer.createTransport(config.smtpUrl);
  return transport;
}

export function closeMailTransport(): void {
  transport?.close();
  transport = null;
}

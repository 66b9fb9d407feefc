/** Templates of the hosted checkout (Indonesian first, English on `?lang=en`) and the sign-in page. */
import type { CheckoutPage, CheckoutViewer, MethodOption } from '../../shared/checkout/service.js';
import type { EscrowRow } from '../../shared/escrows/repo.js';
import type { PaymentRow } from '../../shared/payments/repo.js';
import type { UserRow } from '../../shared/users/repo.js';
import { csrfField, html, rupiah, withLang, type Html, type Lang } from './html.js';

const TEXT = {
  id: {
    title: 'Pembayaran rekber',
    seller: 'Penjual',
    verified: 'Terverifikasi',
    unverified: 'Belum terverifikasi',
    amount: 'Harga barang',
    expiresIn: 'Batas bayar',
    signInToPay: 'Masuk untuk membayar',
    notBuyer: 'Rekber ini dibuat untuk pembeli lain. Hanya pembeli yang dapat membayar.',
    chooseMethod: 'Pilih metode pembayaran',
    surcharge: 'Biaya layanan pembayaran',
    total: 'Total dibayar',
    pay: 'Bayar',
    noGateways: 'Belum ada metode pembayaran yang tersedia. Coba lagi nanti.',
    lastFailed: 'Pembayaran sebelumnya tidak berhasil atau kedaluwarsa. Silakan pilih metode lagi.',
    scanQris: 'Pindai kode QRIS ini dengan aplikasi bank atau e-wallet Anda',
    vaNumber: 'Nomor virtual account',
    copy: 'Salin',
    copied: 'Tersalin',
    openApp: 'Buka aplikasi pembayaran',
    openPayment: 'Buka halaman pembayaran',
    waiting: 'Menunggu pembayaran…',
    checkAgain: 'Periksa lagi',
    stopped: 'Pemeriksaan otomatis berhenti setelah 2 menit.',
    payBefore: 'Bayar sebelum',
    paidTitle: 'Pembayaran diterima',
    paidNext: [
      'Dana Anda disimpan aman di rekber, belum diteruskan ke penjual.',
      'Penjual akan mengirim barang dan memasukkan nomor resi.',
      'Setelah barang diterima dan sesuai, konfirmasi penerimaan agar dana diteruskan ke penjual.',
      'Jika ada masalah, ajukan komplain sebelum batas waktu konfirmasi.',
    ],
    expiredTitle: 'Rekber ini sudah kedaluwarsa',
    expiredBody: 'Batas waktu pembayaran sudah lewat dan rekber dibatalkan. Minta tautan baru kepada penjual.',
    cancelledTitle: 'Rekber ini dibatalkan',
    cancelledBody: 'Rekber ini tidak bisa dibayar lagi.',
    status: 'Status',
    signInTitle: 'Masuk',
    email: 'Email',
    password: 'Kata sandi',
    signIn: 'Masuk',
    code: 'Kode verifikasi dari email',
    verify: 'Verifikasi',
    signedInAs: 'Masuk sebagai',
    transferTo: 'Transfer ke rekening berikut',
    claimReference: 'Nomor referensi / berita transfer (opsional)',
    claim: 'Saya sudah transfer',
    awaitingConfirmation: 'Transfer Anda sedang diperiksa staf. Halaman ini akan diperbarui setelah dikonfirmasi.',
  },
  en: {
    title: 'Escrow checkout',
    seller: 'Seller',
    verified: 'Verified',
    unverified: 'Not verified',
    amount: 'Item price',
    expiresIn: 'Pay before',
    signInToPay: 'Sign in to pay',
    notBuyer: 'This escrow was made for another buyer. Only the buyer can pay it.',
    chooseMethod: 'Choose a payment method',
    surcharge: 'Payment surcharge',
    total: 'Total to pay',
    pay: 'Pay',
    noGateways: 'No payment method is available right now. Try again later.',
    lastFailed: 'The previous payment failed or expired. Please choose a method again.',
    scanQris: 'Scan this QRIS code with your bank or e-wallet app',
    vaNumber: 'Virtual account number',
    copy: 'Copy',
    copied: 'Copied',
    openApp: 'Open the payment app',
    openPayment: 'Open the payment page',
    waiting: 'Waiting for the payment…',
    checkAgain: 'Check again',
    stopped: 'Automatic checking stopped after 2 minutes.',
    payBefore: 'Pay before',
    paidTitle: 'Payment received',
    paidNext: [
      'Your money is held safely in escrow; the seller does not have it yet.',
      'The seller ships the item and adds the tracking number.',
      'Once the item arrives as described, confirm receipt so the money goes to the seller.',
      'If something is wrong, open a dispute before the confirmation deadline.',
    ],
    expiredTitle: 'This escrow has expired',
    expiredBody: 'The payment deadline passed and the escrow was cancelled. Ask the seller for a new link.',
    cancelledTitle: 'This escrow was cancelled',
    cancelledBody: 'This escrow can no longer be paid.',
    status: 'Status',
    signInTitle: 'Sign in',
    email: 'Email',
    password: 'Password',
    signIn: 'Sign in',
    code: 'Verification code from your email',
    verify: 'Verify',
    signedInAs: 'Signed in as',
    transferTo: 'Transfer to this account',
    claimReference: 'Transfer reference (optional)',
    claim: 'I have transferred',
    awaitingConfirmation: 'Staff are checking your transfer. This page updates once it is confirmed.',
  },
} as const;

export type Texts = (typeof TEXT)[Lang];
export const textsOf = (lang: Lang): Texts => TEXT[lang];

const METHOD_LABEL: Record<string, Record<Lang, string>> = {
  qris: { id: 'QRIS', en: 'QRIS' },
  bank_transfer: { id: 'Transfer bank (virtual account)', en: 'Bank transfer (virtual account)' },
  gopay: { id: 'GoPay', en: 'GoPay' },
  shopeepay: { id: 'ShopeePay', en: 'ShopeePay' },
  crypto: { id: 'Kripto', en: 'Crypto' },
};
export const methodLabel = (method: string, lang: Lang) => METHOD_LABEL[method]?.[lang] ?? method;


function when(d: Date, lang: Lang): string {
  return d.toLocaleString(lang === 'en' ? 'en-GB' : 'id-ID', { timeZone: 'Asia/Jakarta', dateStyle: 'medium', timeStyle: 'short' }) + ' WIB';
}

export function previewCard(e: EscrowRow, seller: UserRow, lang: Lang, options: { countdown: boolean }): Html {
  const t = TEXT[lang];
  const verified = seller.kyc_status === 'verified';
  return html`<section class="card" id="preview">
<h1 id="item-name">${e.item_name}</h1>
${e.description ? html`<p class="desc">${e.description}</p>` : ''}
<dl>
<dt>${t.amount}</dt><dd id="amount">${rupiah(e.amount)}</dd>
<dt>${t.seller}</dt><dd id="seller">${seller.full_name} <span class="badge ${verified ? 'ok' : 'plain'}" id="seller-badge">${verified ? `✓ ${t.verified}` : t.unverified}</span></dd>
${options.countdown ? html`<dt>${t.expiresIn}</dt><dd><span id="expires-at">${when(e.expires_at, lang)}</span> · <span id="countdown" data-expires-at="${e.expires_at.toISOString()}" data-lang="${lang}"></span></dd>` : ''}
</dl>
</section>`;
}

export function signInPrompt(e: EscrowRow, lang: Lang): Html {
  const next = withLang(`/pay/${e.id}`, lang);
  return html`<p><a class="button" id="sign-in-to-pay" href="${withLang(`/sign-in?next=${encodeURIComponent(next)}`, lang)}">${TEXT[lang].signInToPay}</a></p>`;
}

export function notBuyerNote(lang: Lang): Html {
  return html`<p class="notice" id="not-buyer">${TEXT[lang].notBuyer}</p>`;
}

export function methodPicker(e: EscrowRow, options: MethodOption[], csrf: string, lang: Lang, lastFailed: boolean): Html {
  const t = TEXT[lang];
  if (options.length === 0) return html`<p class="notice" id="no-gateways">${t.noGateways}</p>`;
  return html`<section class="card" id="methods">
${lastFailed ? html`<p class="notice" id="last-failed">${t.lastFailed}</p>` : ''}
<h2>${t.chooseMethod}</h2>
<form method="post" action="${withLang(`/pay/${e.id}/pay`, lang)}" id="pay-form">
${csrfField(csrf)}
${options.map(
  (o, i) => html`<label class="method">
<input type="radio" name="choice" value="${`${o.provider}:${o.method}`}" ${i === 0 ? html`checked` : ''} data-method="${o.method}" data-provider="${o.provider}">
<span class="method-name">${methodLabel(o.method, lang)} <small>${o.displayName}</small></span>
<span class="fees">${t.surcharge}: <span class="surcharge">${rupiah(o.surcharge)}</span> · ${t.total}: <strong class="total">${rupiah(o.total)}</strong></span>
</label>`,
)}
<button type="submit" id="pay-button">${t.pay}</button>
</form>
</section>`;
}

export function paymentPanel(e: EscrowRow, p: PaymentRow, qrDataUrl: string | null, csrf: string, lang: Lang): Html {
  const t = TEXT[lang];
  return html`<section class="card" id="payment" data-status-url="/api/escrows/${e.id}/payment-status" data-status="${p.status}">
<dl>
<dt>${t.amount}</dt><dd>${rupiah(p.escrow_amount)}</dd>
<dt>${t.surcharge}</dt><dd>${rupiah(p.surcharge)}</dd>
<dt>${t.total}</dt><dd id="payment-total"><strong>${rupiah(p.amount)}</strong> <button type="button" class="copy" data-copy="${String(p.amount)}">${t.copy}</button></dd>
${p.expires_at ? html`<dt>${t.payBefore}</dt><dd id="payment-expires">${when(p.expires_at, lang)}</dd>` : ''}
</dl>
${qrDataUrl ? html`<figure id="qris"><img src="${qrDataUrl}" alt="QRIS" width="240" height="240"><figcaption>${t.scanQris}</figcaption></figure>` : ''}
${p.va_number ? html`<p id="va">${t.vaNumber}${p.va_bank ? html` (${p.va_bank.toUpperCase()})` : ''}: <code id="va-number">${p.va_number}</code> <button type="button" class="copy" data-copy="${p.va_number}">${t.copy}</button></p>` : ''}
${p.deep_link_url ? html`<p><a class="button" id="deep-link" href="${safeHref(p.deep_link_url)}" rel="noopener">${t.openApp}</a></p>` : ''}
${p.redirect_url && !p.deep_link_url && !qrDataUrl && !p.va_number ? html`<p><a class="button" id="payment-url" href="${safeHref(p.redirect_url)}" rel="noopener">${t.openPayment}</a></p>` : ''}
${p.is_manual ? manualPart(e, p, csrf, lang) : ''}
<p id="poll-state" role="status" data-copied="${t.copied}">${t.waiting}</p>
<p id="poll-stopped" hidden>${t.stopped} <button type="button" id="check-again">${t.checkAgain}</button></p>
<p class="muted">${p.gateway_order_id}</p>
</section>`;
}

interface ManualAccount {
  bank?: unknown;
  account_number?: unknown;
  account_name?: unknown;
}

/** The manual gateway's configuration as `pay` stored it on the payment ({ manual, config }). */
function manualConfig(p: PaymentRow): { accounts: ManualAccount[]; instructions: string | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(p.raw_response);
  } catch {
    parsed = null;
  }
  const config = (parsed as { config?: unknown } | null)?.config;
  if (typeof config !== 'object' || config === null) return { accounts: [], instructions: null };
  const c = config as { bank_accounts?: unknown; instructions?: unknown };
  const accounts = Array.isArray(c.bank_accounts) ? (c.bank_accounts as unknown[]).filter((a): a is ManualAccount => typeof a === 'object' && a !== null) : [];
  return { accounts, instructions: typeof c.instructions === 'string' ? c.instructions : null };
}

const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

function manualPart(e: EscrowRow, p: PaymentRow, csrf: string, lang: Lang): Html {
  const t = TEXT[lang];
  const { accounts, instructions } = manualConfig(p);
  return html`<section id="manual">
${accounts.length ? html`<h2>${t.transferTo}</h2><ul id="bank-accounts">${accounts.map(
    (a) => html`<li>${text(a.bank)} <code>${text(a.account_number)}</code> <button type="button" class="copy" data-copy="${text(a.account_number)}">${t.copy}</button><br>${text(a.account_name)}</li>`,
  )}</ul>` : ''}
${instructions ? html`<p id="manual-instructions">${instructions}</p>` : ''}
${
  p.status === 'pending'
    ? html`<form method="post" action="${withLang(`/pay/${e.id}/claim`, lang)}" id="claim-form">${csrfField(csrf)}
<label>${t.claimReference}<input type="text" name="reference" id="claim-reference" maxlength="200"></label>
<button type="submit" id="claim-button">${t.claim}</button></form>`
    : html`<p class="notice" id="awaiting-confirmation">${t.awaitingConfirmation}</p>`
}
</section>`;
}

/** Gateway links open only as http(s) or an app scheme; never javascript: or data:. */
function safeHref(url: string): string {
  return /^(https?:|[a-z][a-z0-9+.-]*:\/\/)/i.test(url) && !/^(javascript|data|vbscript):/i.test(url) ? url : '#';
}

export function otherMethods(picker: Html, lang: Lang): Html {
  return html`<details id="other-methods"><summary>${lang === 'en' ? 'Pay with another method' : 'Bayar dengan metode lain'}</summary>${picker}</details>`;
}

export function paidPanel(lang: Lang): Html {
  const t = TEXT[lang];
  return html`<section class="card ok" id="paid"><h2>${t.paidTitle}</h2><ol>${t.paidNext.map((s) => html`<li>${s}</li>`)}</ol></section>`;
}

export function statusLine(e: EscrowRow, lang: Lang): Html {
  return html`<p class="muted" id="escrow-status" data-status="${e.status}">${TEXT[lang].status}: ${e.status}</p>`;
}

export function endedPanel(kind: 'expired' | 'cancelled', lang: Lang): Html {
  const t = TEXT[lang];
  return kind === 'expired'
    ? html`<section class="card ended" id="expired"><h1>${t.expiredTitle}</h1><p>${t.expiredBody}</p></section>`
    : html`<section class="card ended" id="cancelled"><h1>${t.cancelledTitle}</h1><p>${t.cancelledBody}</p></section>`;
}

export function signInForm(lang: Lang, next: string | null, token: string, error: string | null): Html {
  const t = TEXT[lang];
  return html`<section class="card" id="sign-in">
<h1>${t.signInTitle}</h1>
${error ? html`<p class="notice error" id="sign-in-error">${error}</p>` : ''}
<form method="post" action="${withLang('/sign-in', lang)}">
<input type="hidden" name="_csrf" value="${token}">
${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
<label>${t.email}<input type="email" name="email" id="email" required autocomplete="username"></label>
<label>${t.password}<input type="password" name="password" id="password" required autocomplete="current-password"></label>
<button type="submit" id="sign-in-button">${t.signIn}</button>
</form>
</section>`;
}

export function twoFactorForm(lang: Lang, next: string | null, token: string, ticket: string): Html {
  const t = TEXT[lang];
  return html`<section class="card" id="two-factor">
<h1>${t.signInTitle}</h1>
<form method="post" action="${withLang('/sign-in/2fa', lang)}">
<input type="hidden" name="_csrf" value="${token}">
<input type="hidden" name="ticket" value="${ticket}">
${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
<label>${t.code}<input name="code" id="code" inputmode="numeric" required autocomplete="one-time-code"></label>
<button type="submit" id="verify-button">${t.verify}</button>
</form>
</section>`;
}

/** The checkout page's body for an open escrow: the preview, then what this viewer can do. */
export function checkoutBody(view: Exclude<CheckoutPage<CheckoutViewer & { csrfToken: string }>, { kind: 'ended' }>, lang: Lang): Html {
  const e = view.escrow;
  const parts: Html[] = [previewCard(e, view.seller, lang, { countdown: view.pending })];
  if (view.kind === 'guest') parts.push(view.pending ? signInPrompt(e, lang) : statusLine(e, lang));
  else if (view.kind === 'notBuyer') parts.push(view.pending ? notBuyerNote(lang) : statusLine(e, lang));
  else if (view.kind === 'paid') parts.push(paidPanel(lang), statusLine(e, lang));
  else if (view.kind === 'paying' && view.live) {
    const csrf = view.viewer.csrfToken;
    parts.push(paymentPanel(e, view.live.payment, view.live.qrDataUrl, csrf, lang));
    if (view.options) parts.push(otherMethods(methodPicker(e, view.options, csrf, lang, false), lang));
  } else if (view.kind === 'paying') {
    parts.push(methodPicker(e, view.options ?? [], view.viewer.csrfToken, lang, view.lastFailed));
  }
  return html`${parts}`;
}

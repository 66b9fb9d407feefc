/**
 * The console's record pages (issue 46): one account, escrow, payment-service order or workspace with
 * its history, and the staff moves that belong to it on the same page (each form sends
 * `back`, so the move returns here and shows its result). Templates only; the reads are
 * shared/staff/records.ts. Every visible string comes from the staff member's dictionary `t`
 * (console-text.ts).
 */
import { attentionOf } from '../../shared/payments/manual.js';
import type { AuditLine, EscrowRecord, EventLine, OrderRecord, StaffPaymentRow, UserRecord, WorkspaceRecord } from '../../shared/staff/records.js';
import type { WithdrawalRow } from '../../shared/withdrawals/repo.js';
import type { ConsoleText } from './console-text.js';
import { csrfField, html, rupiah, type Html } from './html.js';

type Piece = Html | string | number | null | undefined;

const iso = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 16) : '');
const entry = (label: string, value: Piece) => html`<dt>${label}</dt><dd>${value ?? ''}</dd>`;

/** A form's hidden `back`: the record page the move returns to. */
export const backField = (path: string) => html`<input type="hidden" name="back" value="${path}">`;

/** The staff note the audit keeps with a move. */
const noteField = (placeholder: string) => html`<input type="text" name="note" placeholder="${placeholder}" maxlength="2000" aria-label="${placeholder}">`;

export const userLink = (id: string, label: string) => html`<a href="/admin/users/${id}">${label}</a>`;
export const escrowLink = (id: string, label: string) => html`<a href="/admin/escrows/${id}">${label}</a>`;
export const orderLink = (id: string, label: string) => html`<a href="/admin/orders/${id}">${label}</a>`;

/**
 * The staff moves a payment waiting for staff takes (decision 0009): a claimed transfer is
 * confirmed or rejected; a late claim or a wrong amount is credited to the buyer's balance
 * or marked returned (with where it went), and a late claim may be rejected. Nothing for a
 * payment that waits for no one. `back`: the record page the move returns to.
 */
export function paymentMoves(t: ConsoleText, p: StaffPaymentRow, csrf: string, back: string | null = null): Html {
  const c = t.c;
  const w = t.payments;
  const reason = attentionOf(p);
  const form = (move: string, label: string, options: { confirm?: string; danger?: boolean; noteRequired?: boolean } = {}) =>
    html`<form method="post" action="/admin/payments/${p.id}/${move}" ${options.confirm ? html`data-confirm="${options.confirm}"` : ''}>${csrfField(csrf)}${back ? backField(back) : ''}${
      options.noteRequired ? html`<input type="text" name="note" placeholder="${w.whereItWent}" maxlength="2000" required>` : html`<input type="text" name="note" placeholder="${c.note}" maxlength="2000">`
    }<button type="submit" ${options.danger ? html`class="danger"` : ''}>${label}</button></form>`;
  if (reason === null) return html``;
  if (reason === 'claimed') return html`${form('confirm', c.confirm, { confirm: c.confirmTransfer })}${form('reject', c.reject, { danger: true })}`;
  const settled = reason === 'amount_mismatch' ? rupiah(Number(p.reported_amount ?? 0)) : rupiah(p.amount);
  const settle = html`${form('credit', w.credit, { confirm: w.confirmCredit(settled) })}${form('mark-returned', w.markReturned, { confirm: w.confirmReturned(settled), noteRequired: true })}`;
  return reason === 'late_claim' ? html`${settle}${form('reject', w.rejectNotReceived, { danger: true })}` : settle;
}

/** A pending withdrawal's approve and reject forms (the note is required for one the risk check sent to review). */
export function withdrawalMoves(t: ConsoleText, w: WithdrawalRow, csrf: string, back: string | null = null): Html {
  const c = t.c;
  const x = t.withdrawals;
  const hidden = html`${csrfField(csrf)}${back ? backField(back) : ''}`;
  return html`<form method="post" action="/admin/withdrawals/${w.id}/approve" data-confirm="${x.confirmApprove}">${hidden}<input type="text" name="note" placeholder="${w.risk_action === 'review' ? x.noteRequired : c.note}" maxlength="2000"><button type="submit">${c.approve}</button></form>
<form method="post" action="/admin/withdrawals/${w.id}/reject">${hidden}<input type="text" name="note" placeholder="${c.note}" maxlength="2000"><button type="submit" class="danger">${c.reject}</button></form>`;
}

/** A titled table, or a line saying there is nothing. */
function listSection<T>(t: ConsoleText, id: string, title: string, rows: readonly T[], head: readonly string[], row: (r: T) => Html): Html {
  return html`<section class="card" id="${id}"><h2>${title}</h2>
${
  rows.length === 0
    ? html`<p class="muted">${t.c.none}</p>`
    : html`<div class="scroll"><table><thead><tr>${head.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>
${rows.map(row)}
</tbody></table></div>`
}</section>`;
}

/** A record's payments, with the moves of any that waits for staff (made here, returning to `back`). */
function paymentsSection(t: ConsoleText, rows: readonly StaffPaymentRow[], csrf: string, back: string): Html {
  const c = t.c;
  const r = t.records;
  return listSection(t, 'payments', c.payments, rows, [c.created, t.payments.for, r.provider, r.gatewayOrderId, c.amount, c.status, t.payments.decision], (p) => {
    const reason = attentionOf(p);
    return html`<tr data-id="${p.id}" data-attention="${reason ?? ''}"><td>${iso(p.created_at)}</td>
<td>${p.escrow_id ? escrowLink(p.escrow_id, c.escrow) : p.order_id ? orderLink(p.order_id, c.order) : ''}</td>
<td>${p.provider} · ${p.method}</td><td>${p.gateway_order_id}${p.claim_reference ? html`<br><span class="muted">${r.claim(p.claim_reference)}</span>` : ''}</td>
<td>${rupiah(p.amount)}</td>
<td class="status">${p.status}${p.flag ? html`<br><span class="muted">${p.flag}</span>` : ''}${reason ? html`<br><span class="muted">${t.payments.attention[reason]}</span>` : ''}</td>
<td>${paymentMoves(t, p, csrf, back)}</td></tr>`;
  });
}

function eventsSection(t: ConsoleText, rows: readonly EventLine[]): Html {
  const c = t.c;
  return listSection(t, 'events', c.events, rows, [c.when, c.event, c.by], (e) => html`<tr data-event="${e.event}"><td>${iso(e.created_at)}</td><td>${e.event}</td><td>${e.actor_role ?? ''}</td></tr>`);
}

/** The staff audit of a record (`audit`), or a staff account's own moves (`moves`). */
function auditSection(t: ConsoleText, rows: readonly AuditLine[], which: 'audit' | 'moves' = 'audit'): Html {
  const c = t.c;
  const title = which === 'audit' ? t.records.staffActions : t.records.movesAsStaff;
  return listSection(t, which, title, rows, [c.when, t.records.action, t.records.on, c.by, c.note], (a) =>
    html`<tr data-action="${a.action}"><td>${iso(a.created_at)}</td><td>${a.action}</td><td>${a.target_type}<br><span class="muted">${a.target_id}</span></td><td>${userLink(a.actor_id, a.actor_name)}</td><td>${a.note ?? ''}</td></tr>`,
  );
}

export function userPage(t: ConsoleText, v: UserRecord, csrf: string): Html {
  const u = v.user;
  const c = t.c;
  const r = t.records;
  const back = `/admin/users/${u.id}`;
  const move =
    u.status === 'active'
      ? html`<form method="post" action="/admin/users/${u.id}/suspend" id="suspend" data-confirm="${r.confirmSuspend(u.email)}">${csrfField(csrf)}${backField(back)}${noteField(c.why)}<button type="submit" class="danger">${c.suspend}</button></form>`
      : u.status === 'suspended'
        ? html`<form method="post" action="/admin/users/${u.id}/reactivate" id="reactivate">${csrfField(csrf)}${backField(back)}${noteField(c.why)}<button type="submit">${c.reactivate}</button></form>`
        : '';
  return html`<section class="card" id="user" data-id="${u.id}" data-status="${u.status}">
<p><a href="/admin/users">${c.users}</a></p>
<h1>${u.full_name}</h1>
<dl>
${entry(r.email, html`${u.email}${u.email_verified_at ? '' : html` <span class="muted">${r.notVerified}</span>`}`)}
${entry(r.username, `@${u.username}`)}
${entry(r.phone, u.phone)}
${entry(c.role, u.role)}
${entry(c.status, html`<strong id="user-status">${u.status}</strong>`)}
${entry(r.identityCheck, u.kyc_status)}
${entry(r.twoStep, u.two_factor_method)}
${entry(r.balance, html`<strong id="balance">${rupiah(u.balance)}</strong>`)}
${entry(c.joined, iso(u.created_at))}
</dl>
${move}
</section>
${listSection(t, 'escrows', c.escrows, v.escrows, [c.created, r.item, c.role, c.amount, c.status], (e) =>
  html`<tr data-id="${e.id}"><td>${iso(e.created_at)}</td><td>${escrowLink(e.id, e.item_name)}</td><td>${e.buyer_id === u.id ? r.asBuyer : r.asSeller}</td><td>${rupiah(e.amount)}</td><td class="status">${e.status}</td></tr>`,
)}
${listSection(t, 'orders', c.orders, v.orders, [c.created, c.what, c.total, c.status], (o) =>
  html`<tr data-id="${o.id}"><td>${iso(o.created_at)}</td><td>${orderLink(o.id, o.target_label ?? o.target_url)}</td><td>${rupiah(o.total)}</td><td class="status">${o.status}</td></tr>`,
)}
${paymentsSection(t, v.payments, csrf, back)}
${listSection(t, 'withdrawals', c.withdrawals, v.withdrawals, [c.requested, c.amount, c.method, c.status, r.reference], (w) =>
  html`<tr data-id="${w.id}"><td>${iso(w.created_at)}</td><td>${rupiah(w.amount)}<br><span class="muted">${c.net(rupiah(w.net_amount))}</span></td><td>${w.method}</td>
<td class="status">${w.status}${w.status === 'pending' ? withdrawalMoves(t, w, csrf, back) : ''}</td><td>${w.payout_reference ?? ''}</td></tr>`,
)}
${listSection(t, 'sessions', r.sessions, v.sessions, [r.started, r.ends, r.from, r.state], (s) =>
  html`<tr data-id="${s.id}"><td>${iso(s.created_at)}</td><td>${iso(s.expires_at)}</td><td>${s.ip ?? ''}<br><span class="muted">${s.user_agent ?? ''}</span></td><td>${s.revoked_at ? r.ended(iso(s.revoked_at)) : r.sessionLive}</td></tr>`,
)}
${auditSection(t, v.audit)}
${u.role === 'admin' ? auditSection(t, v.moves, 'moves') : ''}`;
}

export function escrowPage(t: ConsoleText, v: EscrowRecord, csrf: string): Html {
  const e = v.escrow;
  const c = t.c;
  const r = t.records;
  const back = `/admin/escrows/${e.id}`;
  const open = v.disputes.find((d) => d.status === 'open' || d.status === 'on_hold');
  const ruling = open
    ? html`<form method="post" action="/admin/disputes/${open.id}/resolve" id="resolve" data-confirm="${c.confirmRuling}">${csrfField(csrf)}${backField(back)}
<label>${c.ruling} <select name="outcome" required><option value="release">${c.releaseToSeller}</option><option value="refund">${c.refundBuyer}</option><option value="hold">${c.hold}</option></select></label>
${noteField(c.noteWhy)}<button type="submit">${c.rule}</button></form>`
    : '';
  const dates: [string, Date | null][] = [
    [c.created, e.created_at], [r.expires, e.expires_at], [c.paid, e.paid_at], [r.sent, e.sent_at], [r.received, e.received_at],
    [r.autoRelease, e.auto_release_at], [r.released, e.released_at], [r.disputedAt, e.disputed_at], [c.refunded, e.refunded_at], [c.cancelled, e.cancelled_at],
  ];
  return html`<section class="card" id="escrow" data-id="${e.id}" data-status="${e.status}">
<h1>${r.escrowHeading(e.item_name)}</h1>
<dl>
${entry(c.status, html`<strong id="escrow-status">${e.status}</strong>`)}
${entry(c.amount, html`${rupiah(e.amount)}${e.fee_amount === null ? '' : html` <span class="muted">${r.feeOf(rupiah(e.fee_amount))}</span>`}`)}
${entry(c.buyer, html`${userLink(e.buyer_id, e.buyer_name)} <span class="muted">${e.buyer_email}</span>`)}
${entry(c.seller, html`${userLink(e.seller_id, e.seller_name)} <span class="muted">${e.seller_email}</span>`)}
${entry(r.source, html`${e.source}${e.partner_ref ? html` <span class="muted">${r.partnerReference(e.partner_ref)}</span>` : ''}`)}
${e.courier || e.tracking_number ? entry(r.shipment, `${e.courier ?? ''} ${e.tracking_number ?? ''}`.trim()) : ''}
${e.description ? entry(r.description, e.description) : ''}
${e.cancel_reason ? entry(r.cancelReason, e.cancel_reason) : ''}
${dates.filter(([, d]) => d !== null).map(([label, d]) => entry(label, iso(d)))}
</dl>
</section>
${listSection(t, 'disputes', c.disputes, v.disputes, [r.opened, c.reason, c.status, r.outcome], (d) =>
  html`<tr data-id="${d.id}"><td>${iso(d.created_at)}</td><td>${d.reason_category}<br><span class="muted">${d.description}</span></td><td class="status">${d.status}</td>
<td>${d.outcome ?? ''}${d.resolution_note ? html`<br><span class="muted">${d.resolution_note}</span>` : ''}${d.resolved_at ? html`<br><span class="muted">${iso(d.resolved_at)}</span>` : ''}</td></tr>`,
)}
${ruling ? html`<section class="card" id="ruling"><h2>${r.ruleOpen}</h2>${ruling}</section>` : ''}
${paymentsSection(t, v.payments, csrf, back)}
${eventsSection(t, v.events)}
${auditSection(t, v.audit)}`;
}

/** The operator's moves on an order in its state (the orders service refuses any other). */
export function orderMoves(t: ConsoleText, o: { id: string; status: string }, csrf: string, back: string | null = null): Html {
  const hidden = html`${csrfField(csrf)}${back ? backField(back) : ''}`;
  const c = t.c;
  const x = t.orders;
  if (o.status === 'pending_review') {
    return html`<form method="post" action="/admin/orders/${o.id}/confirm-payment" data-confirm="${c.confirmTransfer}">${hidden}<input type="text" name="note" placeholder="${c.note}" maxlength="2000" aria-label="${c.note}"><button type="submit">${x.confirmPayment}</button></form>`;
  }
  if (o.status === 'paid') {
    return html`<form method="post" action="/admin/orders/${o.id}/process">${hidden}<button type="submit">${x.startProcessing}</button></form>`;
  }
  if (o.status !== 'processing') return html``;
  // processing: deliver, or refund (the orders service refunds only a processing order).
  return html`<form method="post" action="/admin/orders/${o.id}/deliver" data-confirm="${x.confirmDeliver}">${hidden}
<textarea name="credentials" rows="2" maxlength="10000" placeholder="${x.credentialsPlaceholder}" aria-label="${x.credentials}"></textarea>
<input type="text" name="delivery_note" maxlength="3000" placeholder="${x.deliveryNote}" aria-label="${x.deliveryNote}">
<button type="submit">${x.deliver}</button></form><form method="post" action="/admin/orders/${o.id}/refund" data-confirm="${x.confirmRefund}">${hidden}<input type="text" name="reason" placeholder="${c.reason}" maxlength="2000" aria-label="${c.reason}"><button type="submit" class="danger">${x.refund}</button></form>`;
}

export function orderPage(t: ConsoleText, v: OrderRecord, csrf: string): Html {
  const o = v.order;
  const c = t.c;
  const r = t.records;
  const back = `/admin/orders/${o.id}`;
  const moves = orderMoves(t, o, csrf, `/admin/orders/${o.id}`);
  return html`<section class="card" id="order" data-id="${o.id}" data-status="${o.status}">
<p><a href="/admin/orders">${c.orders}</a></p>
<h1>${r.orderHeading(o.target_label ?? o.target_url)}</h1>
<dl>
${entry(c.status, html`<strong id="order-status">${o.status}</strong>${o.auto_refunded ? html` <span class="muted">${r.autoRefunded}</span>` : ''}`)}
${entry(c.buyer, html`${userLink(o.buyer_id, o.buyer_name)} <span class="muted">${o.buyer_email}</span>`)}
${entry(c.what, html`${o.target_url}${o.notes ? html`<br><span class="muted">${o.notes}</span>` : ''}`)}
${entry(c.total, html`${rupiah(o.total)} <span class="muted">${c.itemPlusFee(rupiah(o.item_price), rupiah(o.service_fee))}</span>`)}
${entry(r.paidVia, o.paid_via)}
${entry(c.created, iso(o.created_at))}
${o.paid_at ? entry(c.paid, iso(o.paid_at)) : ''}
${o.sla_deadline_at ? entry(r.deliverBy, iso(o.sla_deadline_at)) : ''}
${o.delivered_at ? entry(r.delivered, html`${iso(o.delivered_at)}${o.delivery_note ? html`<br><span class="muted">${o.delivery_note}</span>` : ''}`) : ''}
${o.refunded_at ? entry(c.refunded, html`${iso(o.refunded_at)}${o.refund_reason ? html`<br><span class="muted">${o.refund_reason}</span>` : ''}`) : ''}
${o.cancelled_at ? entry(c.cancelled, iso(o.cancelled_at)) : ''}
</dl>
${moves.text === '' ? '' : html`<div id="order-moves">${moves}</div>`}
</section>
${paymentsSection(t, v.payments, csrf, back)}
${eventsSection(t, v.events)}
${auditSection(t, v.audit)}`;
}

const last4 = (v: string) => `···· ${v}`;

export const workspaceLink = (id: string, label: string) => html`<a href="/admin/workspaces/${id}">${label}</a>`;

export function workspacePage(t: ConsoleText, v: WorkspaceRecord, csrf: string): Html {
  const w = v.workspace;
  const c = t.c;
  const r = t.records;
  return html`<section class="card" id="workspace" data-id="${w.id}">
<h1>${r.workspaceHeading(w.display_name)}</h1>
<dl>
${entry(c.legalName, w.legal_name)}
${entry(r.mode, html`<strong id="workspace-mode">${w.is_sandbox ? c.sandbox : c.live}</strong>`)}
${entry(t.nav.kyb, html`<strong id="workspace-kyb">${w.kyb_status}</strong>${w.risk_tier ? html` <span class="muted">${c.riskTierOf(w.risk_tier)}</span>` : ''}`)}
${entry(c.country, w.country_code)}
${entry(c.entityType, w.entity_type)}
${entry(c.fee, w.fee_rate_bp === null ? r.platformDefault : r.feeRate((w.fee_rate_bp / 100).toFixed(2), w.fee_min === null ? null : rupiah(Number(w.fee_min))))}
${entry(c.created, iso(w.created_at))}
</dl>
</section>
${listSection(t, 'members', r.members, v.members, [r.member, c.role, c.status, c.joined], (m) =>
  html`<tr data-id="${m.user_id}"><td>${userLink(m.user_id, m.full_name)}<br><span class="muted">${m.email}</span></td><td>${m.role}</td><td>${m.removed_at ? r.removed(iso(m.removed_at)) : m.status}</td><td>${iso(m.joined_at)}</td></tr>`,
)}
${listSection(t, 'kyb-versions', r.kybVersions, v.kybVersions, [c.version, c.status, c.submitted, c.decided, r.outcome, ''], (k) =>
  html`<tr data-id="${k.id}"><td>v${k.version}</td><td class="status">${k.status}</td><td>${iso(k.submitted_at)}</td><td>${iso(k.decided_at)}</td>
<td>${k.risk_tier_assigned ? c.riskTierOf(k.risk_tier_assigned) : ''}${k.decision_reason ? html`<br><span class="muted">${k.decision_reason}</span>` : ''}</td>
<td><a href="/admin/kyb/${k.id}" class="open">${k.status === 'submitted' ? r.review : c.open}</a></td></tr>`,
)}
${listSection(t, 'counterparties', r.counterparties, v.counterparties, [t.kyb.added, r.name, r.relationship, t.nav.kyb], (cp) =>
  html`<tr data-id="${cp.id}"><td>${iso(cp.created_at)}</td><td>${cp.name}${cp.email ? html`<br><span class="muted">${cp.email}</span>` : ''}</td><td>${cp.relationship}</td><td>${cp.kyb_status}</td></tr>`,
)}
${listSection(t, 'instructions', r.instructions, v.instructions, [c.counterparty, c.label, c.destination, c.status, c.reveal], (p) =>
  html`<tr data-id="${p.id}"><td>${p.counterparty_name}</td><td>${p.label}</td><td>${p.bank_name} <span class="account">${last4(p.account_number_last4)}</span><br><span class="muted">${p.account_holder}</span></td>
<td class="status">${p.status}${p.status === 'pending_verification' && p.pending_since ? html`<br><span class="muted">${r.since(iso(p.pending_since))}</span>` : ''}${p.decline_reason ? html`<br><span class="muted">${p.decline_reason}</span>` : ''}</td>
<td><form method="post" action="/admin/instructions/${p.id}/reveal" class="reveal">${csrfField(csrf)}${noteField(c.whyOptional)}<button type="submit">${p.status === 'pending_verification' ? c.revealAndVerify : c.reveal}</button></form></td></tr>`,
)}
${listSection(t, 'keys', r.keys, v.keys, [c.label, r.scopes, r.key, c.created, r.lastUsed, r.state], (k) =>
  html`<tr data-id="${k.id}"><td>${k.label}</td><td>${k.scopes.join(', ')}</td><td>${k.key_preview}</td><td>${iso(k.created_at)}</td><td>${iso(k.last_used_at)}</td><td>${k.revoked_at ? r.revoked(iso(k.revoked_at)) : r.active}</td></tr>`,
)}
${listSection(t, 'deals', r.deals, v.deals, [c.created, c.deal, c.status, c.currency], (d) =>
  html`<tr data-id="${d.id}"><td>${iso(d.created_at)}</td><td><a href="/admin/deals/${d.id}">${d.reference}</a><br><span class="muted">${d.title}</span></td><td class="status">${d.status}${d.is_test ? html`<br><span class="muted">${c.sandbox}</span>` : ''}</td><td>${d.currency}</td></tr>`,
)}
${listSection(t, 'events', c.recentEvents, v.events, [c.when, c.event, c.summary, c.by], (e) =>
  html`<tr data-event="${e.event}"><td>${iso(e.created_at)}</td><td>${e.event}</td><td>${e.deal_id ? html`<a href="/admin/deals/${e.deal_id}">${e.deal_reference ?? ''}</a> ` : ''}${e.summary}</td><td>${e.actor_name ?? ''}</td></tr>`,
)}
${auditSection(t, v.audit)}`;
}

/**
 * The console's record pages (issue 46): one account, escrow, payment-service order or workspace with
 * its history, and the staff moves that belong to it on the same page (each form sends
 * `back`, so the move returns here and shows its result). Templates only; the reads are
 * shared/staff/records.ts.
 */
import type { AuditLine, EscrowRecord, EventLine, OrderRecord, PaymentLine, UserRecord, WorkspaceRecord } from '../../shared/staff/records.js';
import { csrfField, html, rupiah, type Html } from './html.js';

type Piece = Html | string | number | null | undefined;

const iso = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 16) : '');
const entry = (label: string, value: Piece) => html`<dt>${label}</dt><dd>${value ?? ''}</dd>`;

/** A form's hidden `back`: the record page the move returns to. */
const backField = (path: string) => html`<input type="hidden" name="back" value="${path}">`;

/** The staff note the audit keeps with a move. */
const noteField = (placeholder: string) => html`<input type="text" name="note" placeholder="${placeholder}" maxlength="2000" aria-label="${placeholder}">`;

export const userLink = (id: string, label: string) => html`<a href="/admin/users/${id}">${label}</a>`;
export const escrowLink = (id: string, label: string) => html`<a href="/admin/escrows/${id}">${label}</a>`;
export const orderLink = (id: string, label: string) => html`<a href="/admin/orders/${id}">${label}</a>`;

/** A titled table, or a line saying there is nothing. */
function listSection<T>(id: string, title: string, rows: readonly T[], head: readonly string[], row: (r: T) => Html): Html {
  return html`<section class="card" id="${id}"><h2>${title}</h2>
${
  rows.length === 0
    ? html`<p class="muted">None.</p>`
    : html`<div class="scroll"><table><thead><tr>${head.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>
${rows.map(row)}
</tbody></table></div>`
}</section>`;
}

function paymentsSection(rows: readonly PaymentLine[]): Html {
  return listSection('payments', 'Payments', rows, ['Created', 'For', 'Provider', 'Gateway order id', 'Amount', 'Status'], (p) => {
    const attention = p.status === 'awaiting_confirmation' || (p.flag === 'amount_mismatch' && p.status !== 'paid');
    return html`<tr data-id="${p.id}"><td>${iso(p.created_at)}</td>
<td>${p.escrow_id ? escrowLink(p.escrow_id, 'escrow') : p.order_id ? orderLink(p.order_id, 'order') : ''}</td>
<td>${p.provider} · ${p.method}</td><td>${p.gateway_order_id}${p.claim_reference ? html`<br><span class="muted">claim ${p.claim_reference}</span>` : ''}</td>
<td>${rupiah(p.amount)}</td>
<td class="status">${p.status}${p.flag ? html`<br><span class="muted">${p.flag}</span>` : ''}${attention ? html`<br><a href="/admin/payments?q=${p.id}" class="open">Decide in the payments queue</a>` : ''}</td></tr>`;
  });
}

function eventsSection(rows: readonly EventLine[]): Html {
  return listSection('events', 'Events', rows, ['When', 'Event', 'By'], (e) => html`<tr data-event="${e.event}"><td>${iso(e.created_at)}</td><td>${e.event}</td><td>${e.actor_role ?? ''}</td></tr>`);
}

function auditSection(rows: readonly AuditLine[], title = 'Staff actions'): Html {
  return listSection(title === 'Staff actions' ? 'audit' : 'moves', title, rows, ['When', 'Action', 'On', 'By', 'Note'], (a) =>
    html`<tr data-action="${a.action}"><td>${iso(a.created_at)}</td><td>${a.action}</td><td>${a.target_type}<br><span class="muted">${a.target_id}</span></td><td>${userLink(a.actor_id, a.actor_name)}</td><td>${a.note ?? ''}</td></tr>`,
  );
}

export function userPage(v: UserRecord, csrf: string): Html {
  const u = v.user;
  const back = `/admin/users/${u.id}`;
  const move =
    u.status === 'active'
      ? html`<form method="post" action="/admin/users/${u.id}/suspend" id="suspend" data-confirm="Suspend ${u.email}? Their sessions end at once.">${csrfField(csrf)}${backField(back)}${noteField('Why')}<button type="submit" class="danger">Suspend</button></form>`
      : u.status === 'suspended'
        ? html`<form method="post" action="/admin/users/${u.id}/reactivate" id="reactivate">${csrfField(csrf)}${backField(back)}${noteField('Why')}<button type="submit">Reactivate</button></form>`
        : '';
  return html`<section class="card" id="user" data-id="${u.id}" data-status="${u.status}">
<p><a href="/admin/users">Users</a></p>
<h1>${u.full_name}</h1>
<dl>
${entry('E-mail', html`${u.email}${u.email_verified_at ? '' : html` <span class="muted">(not verified)</span>`}`)}
${entry('Username', `@${u.username}`)}
${entry('Phone', u.phone)}
${entry('Role', u.role)}
${entry('Status', html`<strong id="user-status">${u.status}</strong>`)}
${entry('Identity check', u.kyc_status)}
${entry('Two-step sign-in', u.two_factor_method)}
${entry('Balance', html`<strong id="balance">${rupiah(u.balance)}</strong>`)}
${entry('Joined', iso(u.created_at))}
</dl>
${move}
</section>
${listSection('escrows', 'Escrows', v.escrows, ['Created', 'Item', 'Role', 'Amount', 'Status'], (e) =>
  html`<tr data-id="${e.id}"><td>${iso(e.created_at)}</td><td>${escrowLink(e.id, e.item_name)}</td><td>${e.buyer_id === u.id ? 'buyer' : 'seller'}</td><td>${rupiah(e.amount)}</td><td class="status">${e.status}</td></tr>`,
)}
${listSection('orders', 'Payment-service orders', v.orders, ['Created', 'What', 'Total', 'Status'], (o) =>
  html`<tr data-id="${o.id}"><td>${iso(o.created_at)}</td><td>${orderLink(o.id, o.target_label ?? o.target_url)}</td><td>${rupiah(o.total)}</td><td class="status">${o.status}</td></tr>`,
)}
${paymentsSection(v.payments)}
${listSection('withdrawals', 'Withdrawals', v.withdrawals, ['Requested', 'Amount', 'Method', 'Status', 'Reference'], (w) =>
  html`<tr data-id="${w.id}"><td>${iso(w.created_at)}</td><td>${rupiah(w.amount)}<br><span class="muted">net ${rupiah(w.net_amount)}</span></td><td>${w.method}</td>
<td class="status">${w.status}${w.status === 'pending' ? html`<br><a href="/admin/withdrawals?q=${w.id}" class="open">Decide in the withdrawal queue</a>` : ''}</td><td>${w.payout_reference ?? ''}</td></tr>`,
)}
${listSection('sessions', 'Sessions', v.sessions, ['Started', 'Ends', 'From', 'State'], (s) =>
  html`<tr data-id="${s.id}"><td>${iso(s.created_at)}</td><td>${iso(s.expires_at)}</td><td>${s.ip ?? ''}<br><span class="muted">${s.user_agent ?? ''}</span></td><td>${s.revoked_at ? `ended ${iso(s.revoked_at)}` : 'live'}</td></tr>`,
)}
${auditSection(v.audit)}
${u.role === 'admin' ? auditSection(v.moves, 'Moves made as staff') : ''}`;
}

export function escrowPage(v: EscrowRecord, csrf: string): Html {
  const e = v.escrow;
  const back = `/admin/escrows/${e.id}`;
  const open = v.disputes.find((d) => d.status === 'open' || d.status === 'on_hold');
  const ruling = open
    ? html`<form method="post" action="/admin/disputes/${open.id}/resolve" id="resolve" data-confirm="Record this ruling? Release and refund move money.">${csrfField(csrf)}${backField(back)}
<label>Ruling <select name="outcome" required><option value="release">Release to seller</option><option value="refund">Refund buyer</option><option value="hold">Hold</option></select></label>
${noteField('Note (why)')}<button type="submit">Rule</button></form>`
    : '';
  const dates: [string, Date | null][] = [
    ['Created', e.created_at], ['Expires', e.expires_at], ['Paid', e.paid_at], ['Sent', e.sent_at], ['Received', e.received_at],
    ['Auto-release', e.auto_release_at], ['Released', e.released_at], ['Disputed', e.disputed_at], ['Refunded', e.refunded_at], ['Cancelled', e.cancelled_at],
  ];
  return html`<section class="card" id="escrow" data-id="${e.id}" data-status="${e.status}">
<h1>Escrow: ${e.item_name}</h1>
<dl>
${entry('Status', html`<strong id="escrow-status">${e.status}</strong>`)}
${entry('Amount', html`${rupiah(e.amount)} <span class="muted">fee ${rupiah(e.fee_amount)}</span>`)}
${entry('Buyer', html`${userLink(e.buyer_id, e.buyer_name)} <span class="muted">${e.buyer_email}</span>`)}
${entry('Seller', html`${userLink(e.seller_id, e.seller_name)} <span class="muted">${e.seller_email}</span>`)}
${entry('Source', html`${e.source}${e.partner_ref ? html` <span class="muted">partner reference ${e.partner_ref}</span>` : ''}`)}
${e.courier || e.tracking_number ? entry('Shipment', `${e.courier ?? ''} ${e.tracking_number ?? ''}`.trim()) : ''}
${e.description ? entry('Description', e.description) : ''}
${e.cancel_reason ? entry('Cancel reason', e.cancel_reason) : ''}
${dates.filter(([, d]) => d !== null).map(([label, d]) => entry(label, iso(d)))}
</dl>
</section>
${listSection('disputes', 'Disputes', v.disputes, ['Opened', 'Reason', 'Status', 'Outcome'], (d) =>
  html`<tr data-id="${d.id}"><td>${iso(d.created_at)}</td><td>${d.reason_category}<br><span class="muted">${d.description}</span></td><td class="status">${d.status}</td>
<td>${d.outcome ?? ''}${d.resolution_note ? html`<br><span class="muted">${d.resolution_note}</span>` : ''}${d.resolved_at ? html`<br><span class="muted">${iso(d.resolved_at)}</span>` : ''}</td></tr>`,
)}
${ruling ? html`<section class="card" id="ruling"><h2>Rule the open dispute</h2>${ruling}</section>` : ''}
${paymentsSection(v.payments)}
${eventsSection(v.events)}
${auditSection(v.audit)}`;
}

/** The operator's moves on an order in its state (the orders service refuses any other). */
export function orderMoves(o: { id: string; status: string }, csrf: string, back: string | null = null): Html {
  const hidden = html`${csrfField(csrf)}${back ? backField(back) : ''}`;
  if (o.status === 'pending_review') {
    return html`<form method="post" action="/admin/orders/${o.id}/confirm-payment" data-confirm="Confirm that this transfer arrived?">${hidden}<input type="text" name="note" placeholder="Note" maxlength="2000" aria-label="Note"><button type="submit">Confirm payment</button></form>`;
  }
  if (o.status === 'paid') {
    return html`<form method="post" action="/admin/orders/${o.id}/process">${hidden}<button type="submit">Start processing</button></form>`;
  }
  if (o.status !== 'processing') return html``;
  // processing: deliver, or refund (the orders service refunds only a processing order).
  return html`<form method="post" action="/admin/orders/${o.id}/deliver" data-confirm="Deliver this order? The money becomes final.">${hidden}
<textarea name="credentials" rows="2" maxlength="10000" placeholder="Credentials (sealed, shown only to the buyer)" aria-label="Credentials"></textarea>
<input type="text" name="delivery_note" maxlength="3000" placeholder="Delivery note" aria-label="Delivery note">
<button type="submit">Deliver</button></form><form method="post" action="/admin/orders/${o.id}/refund" data-confirm="Refund this order in full to the buyer's balance?">${hidden}<input type="text" name="reason" placeholder="Reason" maxlength="2000" aria-label="Reason"><button type="submit" class="danger">Refund</button></form>`;
}

export function orderPage(v: OrderRecord, csrf: string): Html {
  const o = v.order;
  const moves = orderMoves(o, csrf, `/admin/orders/${o.id}`);
  return html`<section class="card" id="order" data-id="${o.id}" data-status="${o.status}">
<p><a href="/admin/orders">Payment-service orders</a></p>
<h1>Order: ${o.target_label ?? o.target_url}</h1>
<dl>
${entry('Status', html`<strong id="order-status">${o.status}</strong>${o.auto_refunded ? html` <span class="muted">(refunded when its time ran out)</span>` : ''}`)}
${entry('Buyer', html`${userLink(o.buyer_id, o.buyer_name)} <span class="muted">${o.buyer_email}</span>`)}
${entry('What', html`${o.target_url}${o.notes ? html`<br><span class="muted">${o.notes}</span>` : ''}`)}
${entry('Total', html`${rupiah(o.total)} <span class="muted">item ${rupiah(o.item_price)} + fee ${rupiah(o.service_fee)}</span>`)}
${entry('Paid via', o.paid_via)}
${entry('Created', iso(o.created_at))}
${o.paid_at ? entry('Paid', iso(o.paid_at)) : ''}
${o.sla_deadline_at ? entry('Deliver by', iso(o.sla_deadline_at)) : ''}
${o.delivered_at ? entry('Delivered', html`${iso(o.delivered_at)}${o.delivery_note ? html`<br><span class="muted">${o.delivery_note}</span>` : ''}`) : ''}
${o.refunded_at ? entry('Refunded', html`${iso(o.refunded_at)}${o.refund_reason ? html`<br><span class="muted">${o.refund_reason}</span>` : ''}`) : ''}
${o.cancelled_at ? entry('Cancelled', iso(o.cancelled_at)) : ''}
</dl>
${moves.text === '' ? '' : html`<div id="order-moves">${moves}</div>`}
</section>
${paymentsSection(v.payments)}
${eventsSection(v.events)}
${auditSection(v.audit)}`;
}

const last4 = (v: string) => `···· ${v}`;

export const workspaceLink = (id: string, label: string) => html`<a href="/admin/workspaces/${id}">${label}</a>`;

export function workspacePage(v: WorkspaceRecord, csrf: string): Html {
  const w = v.workspace;
  return html`<section class="card" id="workspace" data-id="${w.id}">
<h1>Workspace: ${w.display_name}</h1>
<dl>
${entry('Legal name', w.legal_name)}
${entry('Mode', html`<strong id="workspace-mode">${w.is_sandbox ? 'sandbox' : 'live'}</strong>`)}
${entry('KYB', html`<strong id="workspace-kyb">${w.kyb_status}</strong>${w.risk_tier ? html` <span class="muted">risk tier ${w.risk_tier}</span>` : ''}`)}
${entry('Country', w.country_code)}
${entry('Entity type', w.entity_type)}
${entry('Fee', w.fee_rate_bp === null ? 'the platform default' : `${(w.fee_rate_bp / 100).toFixed(2)}%${w.fee_min === null ? '' : `, minimum ${rupiah(Number(w.fee_min))}`}`)}
${entry('Created', iso(w.created_at))}
</dl>
</section>
${listSection('members', 'Members', v.members, ['Member', 'Role', 'Status', 'Joined'], (m) =>
  html`<tr data-id="${m.user_id}"><td>${userLink(m.user_id, m.full_name)}<br><span class="muted">${m.email}</span></td><td>${m.role}</td><td>${m.removed_at ? `removed ${iso(m.removed_at)}` : m.status}</td><td>${iso(m.joined_at)}</td></tr>`,
)}
${listSection('kyb-versions', 'KYB versions', v.kybVersions, ['Version', 'Status', 'Submitted', 'Decided', 'Outcome', ''], (k) =>
  html`<tr data-id="${k.id}"><td>v${k.version}</td><td class="status">${k.status}</td><td>${iso(k.submitted_at)}</td><td>${iso(k.decided_at)}</td>
<td>${k.risk_tier_assigned ? `risk tier ${k.risk_tier_assigned}` : ''}${k.decision_reason ? html`<br><span class="muted">${k.decision_reason}</span>` : ''}</td>
<td><a href="/admin/kyb/${k.id}" class="open">${k.status === 'submitted' ? 'Review' : 'Open'}</a></td></tr>`,
)}
${listSection('counterparties', 'Counterparties', v.counterparties, ['Added', 'Name', 'Relationship', 'KYB'], (c) =>
  html`<tr data-id="${c.id}"><td>${iso(c.created_at)}</td><td>${c.name}${c.email ? html`<br><span class="muted">${c.email}</span>` : ''}</td><td>${c.relationship}</td><td>${c.kyb_status}</td></tr>`,
)}
${listSection('instructions', 'Payout instructions', v.instructions, ['Counterparty', 'Label', 'Destination', 'Status', 'Reveal'], (p) =>
  html`<tr data-id="${p.id}"><td>${p.counterparty_name}</td><td>${p.label}</td><td>${p.bank_name} <span class="account">${last4(p.account_number_last4)}</span><br><span class="muted">${p.account_holder}</span></td>
<td class="status">${p.status}${p.status === 'pending_verification' && p.pending_since ? html`<br><span class="muted">since ${iso(p.pending_since)}</span>` : ''}${p.decline_reason ? html`<br><span class="muted">${p.decline_reason}</span>` : ''}</td>
<td><form method="post" action="/admin/instructions/${p.id}/reveal" class="reveal">${csrfField(csrf)}${noteField('Why (optional)')}<button type="submit">${p.status === 'pending_verification' ? 'Reveal and verify' : 'Reveal'}</button></form></td></tr>`,
)}
${listSection('keys', 'API keys', v.keys, ['Label', 'Scopes', 'Key', 'Created', 'Last used', 'State'], (k) =>
  html`<tr data-id="${k.id}"><td>${k.label}</td><td>${k.scopes.join(', ')}</td><td>${k.key_preview}</td><td>${iso(k.created_at)}</td><td>${iso(k.last_used_at)}</td><td>${k.revoked_at ? `revoked ${iso(k.revoked_at)}` : 'active'}</td></tr>`,
)}
${listSection('deals', 'Deals', v.deals, ['Created', 'Deal', 'Status', 'Currency'], (d) =>
  html`<tr data-id="${d.id}"><td>${iso(d.created_at)}</td><td><a href="/admin/deals/${d.id}">${d.reference}</a><br><span class="muted">${d.title}</span></td><td class="status">${d.status}${d.is_test ? html`<br><span class="muted">sandbox</span>` : ''}</td><td>${d.currency}</td></tr>`,
)}
${listSection('events', 'Recent events', v.events, ['When', 'Event', 'Summary', 'By'], (e) =>
  html`<tr data-event="${e.event}"><td>${iso(e.created_at)}</td><td>${e.event}</td><td>${e.deal_id ? html`<a href="/admin/deals/${e.deal_id}">${e.deal_reference ?? ''}</a> ` : ''}${e.summary}</td><td>${e.actor_name ?? ''}</td></tr>`,
)}
${auditSection(v.audit)}`;
}

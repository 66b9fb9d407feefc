/** Templates of the operator console (English; staff pages). Every form carries the session's CSRF token. */
import type { DisputeView } from '../../shared/disputes/repo.js';
import type { ListedOrder, ListedUser } from '../../shared/checkout/console.js';
import { attentionOf } from '../../shared/payments/manual.js';
import type { AttentionReason, StaffPaymentRow } from '../../shared/payments/repo.js';
import type { StaffListed } from '../../shared/withdrawals/service.js';
import { QUEUE_DASHBOARD_PATH } from '../routes/admin-queues.js';
import { csrfField, html, rupiah, type Html } from './html.js';

export type ConsoleSection = 'overview' | 'disputes' | 'payments' | 'withdrawals' | 'orders' | 'users';

const iso = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 16) : '');

export function consoleNav(active: ConsoleSection, who: string, csrf: string): Html {
  const link = (section: ConsoleSection, href: string, label: string) =>
    html`<a href="${href}" ${section === active ? html`aria-current="page"` : ''}>${label}</a>`;
  return html`<nav class="console card">
${link('overview', '/admin', 'Overview')}${link('disputes', '/admin/disputes', 'Disputes')}${link('payments', '/admin/payments', 'Payments')}${link('withdrawals', '/admin/withdrawals', 'Withdrawals')}${link('orders', '/admin/orders', 'Orders')}${link('users', '/admin/users', 'Users')}<a href="${QUEUE_DASHBOARD_PATH}" id="queues-link">Queues</a>
<span class="muted">${who}</span>
<form method="post" action="/admin/sign-out" class="inline">${csrfField(csrf)}<button type="submit" class="copy">Sign out</button></form>
</nav>`;
}

export function flash(done: unknown): Html {
  return typeof done === 'string' && /^[a-z_.]{1,40}$/.test(done) ? html`<p class="notice" id="flash">Done: ${done}</p>` : html``;
}

export function overview(counts: { disputes: number; payments: number; withdrawals: number; orders: number }): Html {
  return html`<section class="card" id="overview"><h1>Operator console</h1><ul>
<li><a href="/admin/disputes">Disputes to rule</a>: <strong id="count-disputes">${counts.disputes}</strong></li>
<li><a href="/admin/payments">Payments needing staff</a>: <strong id="count-payments">${counts.payments}</strong></li>
<li><a href="/admin/withdrawals">Withdrawals to approve</a>: <strong id="count-withdrawals">${counts.withdrawals}</strong></li>
<li><a href="/admin/orders">Payment-service orders to move</a>: <strong id="count-orders">${counts.orders}</strong></li>
<li><a href="/admin/users">Users</a> (suspend, reactivate)</li>
<li><a href="${QUEUE_DASHBOARD_PATH}">Queues (Bull Board)</a></li>
</ul></section>`;
}

export function disputesTable(rows: DisputeView[], csrf: string): Html {
  return html`<section class="card"><h1>Disputes to rule</h1>
${rows.length === 0 ? html`<p id="none">Nothing to rule.</p>` : ''}
<table id="disputes"><thead><tr><th>Opened</th><th>Escrow</th><th>Parties</th><th>Reason</th><th>Status</th><th>Ruling</th></tr></thead><tbody>
${rows.map(
  (d) => html`<tr data-id="${d.id}">
<td>${iso(d.created_at)}</td>
<td>${d.item_name}<br>${rupiah(d.amount)}<br><span class="muted">${d.escrow_id}</span></td>
<td>Buyer: ${d.buyer_full_name} &lt;${d.buyer_email}&gt;<br>Seller: ${d.seller_full_name} &lt;${d.seller_email}&gt;</td>
<td>${d.reason_category}<br><span class="muted">${d.description}</span></td>
<td class="status">${d.status}</td>
<td><form method="post" action="/admin/disputes/${d.id}/resolve" data-confirm="Record this ruling? Release and refund move money.">
${csrfField(csrf)}
<select name="outcome" required><option value="release">Release to seller</option><option value="refund">Refund buyer</option><option value="hold">Hold</option></select>
<input type="text" name="note" placeholder="Note (why)" maxlength="2000">
<button type="submit">Rule</button>
</form></td>
</tr>`,
)}
</tbody></table></section>`;
}

const ATTENTION_LABEL: Record<AttentionReason, string> = {
  claimed: 'Claimed transfer',
  late_claim: 'Claimed late: the escrow or order no longer takes it',
  amount_mismatch: 'Gateway amount mismatch',
};

export function paymentsTable(rows: StaffPaymentRow[], csrf: string): Html {
  const note = (placeholder = 'Note') => html`<input type="text" name="note" placeholder="${placeholder}" maxlength="2000">`;
  const form = (p: StaffPaymentRow, move: string, label: string, options: { confirm?: string; danger?: boolean; noteRequired?: boolean } = {}) =>
    html`<form method="post" action="/admin/payments/${p.id}/${move}" ${options.confirm ? html`data-confirm="${options.confirm}"` : ''}>${csrfField(csrf)}${
      options.noteRequired ? html`<input type="text" name="note" placeholder="Where it went (required)" maxlength="2000" required>` : note()
    }<button type="submit" ${options.danger ? html`class="danger"` : ''}>${label}</button></form>`;
  const moves = (p: StaffPaymentRow, reason: AttentionReason | null): Html => {
    const settled = reason === 'amount_mismatch' ? rupiah(Number(p.reported_amount ?? 0)) : rupiah(p.amount);
    const settle = html`${form(p, 'credit', 'Credit to buyer balance', { confirm: `Credit ${settled} to the buyer's balance?` })}${form(p, 'mark-returned', 'Mark returned', { confirm: `Record that ${settled} was returned to the payer outside the service?`, noteRequired: true })}`;
    if (reason === 'claimed') {
      return html`${form(p, 'confirm', 'Confirm', { confirm: 'Confirm that this transfer arrived?' })}${form(p, 'reject', 'Reject', { danger: true })}`;
    }
    if (reason === 'late_claim') return html`${settle}${form(p, 'reject', 'Reject (not received)', { danger: true })}`;
    return settle;
  };
  return html`<section class="card"><h1>Payments needing staff</h1>
<p class="muted">Claimed manual transfers to confirm or reject (confirming an order's transfer marks the order paid); transfers claimed after the escrow or order closed and gateway payments of the wrong amount, to credit to the buyer's balance or mark returned.</p>
${rows.length === 0 ? html`<p id="none">Nothing waiting.</p>` : ''}
<table id="payments"><thead><tr><th>Since</th><th>For</th><th>Buyer</th><th>Amount</th><th>Why</th><th>Decision</th></tr></thead><tbody>
${rows.map((p) => {
  const reason = attentionOf(p);
  return html`<tr data-id="${p.id}" data-attention="${reason ?? ''}">
<td>${iso(p.claimed_at ?? p.created_at)}</td><td>${p.item_name}<br><span class="muted">${p.escrow_id ? `escrow ${p.escrow_id}` : `order ${p.order_id ?? ''}`} (${p.target_status})</span></td><td>${p.buyer_email}</td>
<td>${rupiah(p.amount)}${reason === 'amount_mismatch' ? html`<br><span class="muted">gateway reported ${rupiah(Number(p.reported_amount ?? 0))}</span>` : ''}</td>
<td>${reason ? ATTENTION_LABEL[reason] : ''}${p.claim_reference ? html`<br><span class="muted">${p.claim_reference}</span>` : ''}<br><span class="muted">${p.provider}</span></td>
<td>${moves(p, reason)}</td>
</tr>`;
})}
</tbody></table></section>`;
}

export function withdrawalsTable(rows: StaffListed[], csrf: string): Html {
  return html`<section class="card"><h1>Withdrawals to approve</h1>
${rows.length === 0 ? html`<p id="none">No pending withdrawals.</p>` : ''}
<table id="withdrawals"><thead><tr><th>Requested</th><th>Who</th><th>Amount</th><th>Method</th><th>Risk</th><th>Decision</th></tr></thead><tbody>
${rows.map(
  ({ row: w, user }) => html`<tr data-id="${w.id}">
<td>${iso(w.created_at)}</td><td>${user ? html`${user.full_name}<br>${user.email}` : w.user_id}</td>
<td>${rupiah(w.amount)}<br><span class="muted">net ${rupiah(w.net_amount)}</span></td><td>${w.method}</td>
<td>${w.risk_action}${w.risk_flags.length ? html`<br><span class="muted">${w.risk_flags.join(', ')}</span>` : ''}</td>
<td><form method="post" action="/admin/withdrawals/${w.id}/approve" data-confirm="Approve this payout?">${csrfField(csrf)}<input type="text" name="note" placeholder="Note${w.risk_action === 'review' ? ' (required)' : ''}" maxlength="2000"><button type="submit">Approve</button></form>
<form method="post" action="/admin/withdrawals/${w.id}/reject">${csrfField(csrf)}<input type="text" name="note" placeholder="Note" maxlength="2000"><button type="submit" class="danger">Reject</button></form></td>
</tr>`,
)}
</tbody></table></section>`;
}

export function usersTable(rows: ListedUser[], q: string, csrf: string): Html {
  return html`<section class="card"><h1>Users</h1>
<form method="get" action="/admin/users"><input type="search" name="q" value="${q}" placeholder="Email, username or name"><button type="submit">Search</button></form>
<table id="users"><thead><tr><th>Account</th><th>Role</th><th>Status</th><th>Move</th></tr></thead><tbody>
${rows.map(
  (u) => html`<tr data-id="${u.id}">
<td>${u.full_name}<br>${u.email} · @${u.username}</td><td>${u.role}</td><td class="status">${u.status}</td>
<td>${
    u.status === 'active'
      ? html`<form method="post" action="/admin/users/${u.id}/suspend" data-confirm="Suspend this account? Its sessions end.">${csrfField(csrf)}<input type="text" name="note" placeholder="Why" maxlength="2000"><button type="submit" class="danger">Suspend</button></form>`
      : u.status === 'suspended'
        ? html`<form method="post" action="/admin/users/${u.id}/reactivate">${csrfField(csrf)}<input type="text" name="note" placeholder="Why" maxlength="2000"><button type="submit">Reactivate</button></form>`
        : ''
  }</td>
</tr>`,
)}
</tbody></table></section>`;
}

export function ordersTable(rows: ListedOrder[], csrf: string): Html {
  const refund = (o: ListedOrder) =>
    html`<form method="post" action="/admin/orders/${o.id}/refund" data-confirm="Refund this order in full to the buyer's balance?">${csrfField(csrf)}<input type="text" name="reason" placeholder="Reason" maxlength="2000"><button type="submit" class="danger">Refund</button></form>`;
  const moves = (o: ListedOrder): Html => {
    if (o.status === 'pending_review') {
      return html`<form method="post" action="/admin/orders/${o.id}/confirm-payment" data-confirm="Confirm that this transfer arrived?">${csrfField(csrf)}<input type="text" name="note" placeholder="Note" maxlength="2000"><button type="submit">Confirm payment</button></form>`;
    }
    if (o.status === 'paid') {
      return html`<form method="post" action="/admin/orders/${o.id}/process">${csrfField(csrf)}<button type="submit">Start processing</button></form>`;
    }
    // processing: deliver, or refund (the orders service refunds only a processing order).
    return html`<form method="post" action="/admin/orders/${o.id}/deliver" data-confirm="Deliver this order? The money becomes final.">${csrfField(csrf)}
<textarea name="credentials" rows="2" maxlength="10000" placeholder="Credentials (sealed, shown only to the buyer)"></textarea>
<input type="text" name="delivery_note" maxlength="3000" placeholder="Delivery note">
<button type="submit">Deliver</button></form>${refund(o)}`;
  };
  return html`<section class="card"><h1>Payment-service orders</h1>
${rows.length === 0 ? html`<p id="none">No orders waiting.</p>` : ''}
<table id="orders"><thead><tr><th>Created</th><th>Buyer</th><th>What</th><th>Total</th><th>Status</th><th>SLA</th><th>Move</th></tr></thead><tbody>
${rows.map(
  (o) => html`<tr data-id="${o.id}">
<td>${iso(o.created_at)}</td><td>${o.buyer_email}</td>
<td>${o.target_label ?? ''}<br><span class="muted">${o.target_url}</span>${o.notes ? html`<br><span class="muted">${o.notes}</span>` : ''}</td>
<td>${rupiah(o.total)}<br><span class="muted">item ${rupiah(o.item_price)} + fee ${rupiah(o.service_fee)}</span></td>
<td class="status">${o.status}${o.paid_via ? html`<br><span class="muted">${o.paid_via}</span>` : ''}</td>
<td>${iso(o.sla_deadline_at)}</td>
<td>${moves(o)}</td>
</tr>`,
)}
</tbody></table></section>`;
}

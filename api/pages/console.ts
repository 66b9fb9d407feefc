/** Templates of the operator console (English; staff pages). Every form carries the session's CSRF token. */
import type { DisputeView } from '../../shared/disputes/repo.js';
import type { ConsoleCounts, ListedOrder, ListedUser, PendingInstruction } from '../../shared/checkout/console.js';
import { ALLOCATIONS, feeSharesOpen, type Allocation } from '../../shared/deals/fees.js';
import type { AwaitingRow, DisputedRow } from '../../shared/deals/repo.js';
import { serializeFee } from '../../shared/deals/serialize.js';
import type { StaffDeal } from '../../shared/deals/staff.js';
import type { StaffApplication } from '../../shared/kyb/review.js';
import type { serializeQueueItem } from '../../shared/kyb/serialize.js';
import { reviewDueBy, slotOf, slotsOf } from '../../shared/kyb/slots.js';
import { RISK_TIERS } from '../../shared/kyb/states.js';
import { attentionOf } from '../../shared/payments/manual.js';
import type { AttentionReason, StaffPaymentRow } from '../../shared/payments/repo.js';
import { maskAccountNumber } from '../../shared/payouts/instruction-serialize.js';
import type { InstructionForStaff } from '../../shared/payouts/instructions-repo.js';
import type { PayoutListRow } from '../../shared/payouts/repo.js';
import { QUEUE_PAGE, type QueuePage } from '../../shared/staff/queue.js';
import type { StaffListed } from '../../shared/withdrawals/service.js';
import { QUEUE_DASHBOARD_PATH } from '../routes/admin-queues.js';
import { escrowLink, orderLink, orderMoves, userLink, workspaceLink } from './console-records.js';
import { csrfField, html, rupiah, type Html } from './html.js';

export type ConsoleSection = 'overview' | 'disputes' | 'payments' | 'withdrawals' | 'orders' | 'kyb' | 'funding' | 'instructions' | 'payouts' | 'rulings' | 'users';

const iso = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 16) : '');

export function consoleNav(active: ConsoleSection, who: string, csrf: string): Html {
  const link = (section: ConsoleSection, href: string, label: string) =>
    html`<a href="${href}" ${section === active ? html`aria-current="page"` : ''}>${label}</a>`;
  return html`<nav class="console card">
${link('overview', '/admin', 'Overview')}${link('disputes', '/admin/disputes', 'Disputes')}${link('payments', '/admin/payments', 'Payments')}${link('withdrawals', '/admin/withdrawals', 'Withdrawals')}${link('orders', '/admin/orders', 'Orders')}${link('kyb', '/admin/kyb', 'KYB')}${link('funding', '/admin/funding', 'Funding')}${link('instructions', '/admin/instructions', 'Instructions')}${link('payouts', '/admin/payouts', 'Payouts')}${link('rulings', '/admin/rulings', 'Rulings')}${link('users', '/admin/users', 'Users')}<a href="${QUEUE_DASHBOARD_PATH}" id="queues-link">Queues</a>
<span class="muted">${who}</span>
<form method="post" action="/admin/sign-out" class="inline">${csrfField(csrf)}<button type="submit" class="copy">Sign out</button></form>
</nav>`;
}

export function flash(done: unknown): Html {
  return typeof done === 'string' && /^[a-z_.]{1,40}$/.test(done) ? html`<p class="notice" id="flash">Done: ${done}</p>` : html``;
}

export function overview(counts: ConsoleCounts): Html {
  return html`<section class="card" id="overview"><h1>Operator console</h1><ul>
<li><a href="/admin/disputes">Disputes to rule</a>: <strong id="count-disputes">${counts.disputes}</strong></li>
<li><a href="/admin/payments">Payments needing staff</a>: <strong id="count-payments">${counts.payments}</strong></li>
<li><a href="/admin/withdrawals">Withdrawals to approve</a>: <strong id="count-withdrawals">${counts.withdrawals}</strong></li>
<li><a href="/admin/orders">Payment-service orders to move</a>: <strong id="count-orders">${counts.orders}</strong></li>
<li><a href="/admin/kyb">KYB applications to review</a>: <strong id="count-kyb">${counts.kyb}</strong></li>
<li><a href="/admin/funding">Live deal milestones awaiting funding confirmation</a>: <strong id="count-funding">${counts.funding}</strong></li>
<li><a href="/admin/instructions">Payout instructions to verify</a>: <strong id="count-instructions">${counts.instructions}</strong></li>
<li><a href="/admin/payouts">Deal payouts to settle or fail</a>: <strong id="count-payouts">${counts.payouts}</strong></li>
<li><a href="/admin/rulings">Disputed deal milestones to rule</a>: <strong id="count-rulings">${counts.rulings}</strong></li>
<li><a href="/admin/users">Users</a> (suspend, reactivate)</li>
<li><a href="${QUEUE_DASHBOARD_PATH}">Queues (Bull Board)</a></li>
</ul></section>`;
}

/** A queue's search and waiting filters as the page shows them back (issue 46). */
export interface QueueFilters {
  q: string;
  olderThanHours: number | null;
}

/** The dispute queue's, with its status filter. */
export interface DisputeFilters extends QueueFilters {
  status: string;
}

/** `path` with the filters' query (empty ones and defaults left out), for a queue's page links. */
function withFilters(path: string, f: QueueFilters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(extra);
  if (f.q !== '') params.set('q', f.q);
  if (f.olderThanHours !== null) params.set('older_than_hours', String(f.olderThanHours));
  const query = params.toString();
  return query === '' ? path : `${path}?${query}`;
}

/** A queue's filter form: the search (`placeholder` says what it finds), what `more` adds, how long an item has waited. */
function queueFilterForm(action: string, id: string, f: QueueFilters, placeholder: string, more: Html | '' = ''): Html {
  return html`<form method="get" action="${action}" id="${id}" class="filters" role="search">
<label>Search <input type="search" name="q" value="${f.q}" maxlength="200" placeholder="${placeholder}"></label>
${more}<label>Waiting at least <input type="number" name="older_than_hours" min="1" max="8784" step="1" value="${f.olderThanHours === null ? '' : String(f.olderThanHours)}"> hours</label>
<button type="submit">Filter</button> <a href="${action}">Clear</a>
</form>
<p class="muted">The longest waiting first.</p>`;
}

function disputeFilterForm(f: DisputeFilters): Html {
  const option = (value: string, label: string) => html`<option value="${value}"${f.status === value ? html` selected` : ''}>${label}</option>`;
  const status = html`<label>Status <select name="status">${option('all', 'Open and on hold')}${option('open', 'Open')}${option('on_hold', 'On hold')}</select></label>
`;
  return queueFilterForm('/admin/disputes', 'dispute-filters', f, 'Escrow or dispute id, item, e-mail, username, name', status);
}

export function disputesTable(page: QueuePage<DisputeView>, csrf: string, filters: DisputeFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Disputes to rule</h1>
${disputeFilterForm(filters)}
${rows.length === 0 ? html`<p id="none">Nothing to rule.</p>` : ''}
<table id="disputes"><thead><tr><th>Opened</th><th>Escrow</th><th>Parties</th><th>Reason</th><th>Status</th><th>Ruling</th></tr></thead><tbody>
${rows.map(
  (d) => html`<tr data-id="${d.id}">
<td>${iso(d.created_at)}</td>
<td>${escrowLink(d.escrow_id, d.item_name)}<br>${rupiah(d.amount)}<br><span class="muted">${d.escrow_id}</span></td>
<td>Buyer: ${userLink(d.buyer_id, d.buyer_full_name)} &lt;${d.buyer_email}&gt;<br>Seller: ${userLink(d.seller_id, d.seller_full_name)} &lt;${d.seller_email}&gt;</td>
<td>${d.reason_category}<br><span class="muted">${d.description}</span></td>
<td class="status">${d.status}</td>
<td><form method="post" action="/admin/disputes/${d.id}/resolve" data-confirm="Record this ruling? Release and refund move money.">
${csrfField(csrf)}
<select name="outcome" required aria-label="Ruling"><option value="release">Release to seller</option><option value="refund">Refund buyer</option><option value="hold">Hold</option></select>
<input type="text" name="note" placeholder="Note (why)" maxlength="2000">
<button type="submit">Rule</button>
</form></td>
</tr>`,
)}
</tbody></table>${nextPageLink(withFilters('/admin/disputes', filters, filters.status === 'all' ? {} : { status: filters.status }), page.next)}</section>`;
}

const ATTENTION_LABEL: Record<AttentionReason, string> = {
  claimed: 'Claimed transfer',
  late_claim: 'Claimed late: the escrow or order no longer takes it',
  amount_mismatch: 'Gateway amount mismatch',
};

export function paymentsTable(page: QueuePage<StaffPaymentRow>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
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
${queueFilterForm('/admin/payments', 'payment-filters', filters, 'Payment, escrow or order id, gateway order id, claim reference, e-mail, username, name, item')}
${rows.length === 0 ? html`<p id="none">Nothing waiting.</p>` : ''}
<table id="payments"><thead><tr><th>Created</th><th>For</th><th>Buyer</th><th>Amount</th><th>Why</th><th>Decision</th></tr></thead><tbody>
${rows.map((p) => {
  const reason = attentionOf(p);
  return html`<tr data-id="${p.id}" data-attention="${reason ?? ''}">
<td>${iso(p.created_at)}${p.claimed_at ? html`<br><span class="muted">claimed ${iso(p.claimed_at)}</span>` : ''}</td><td>${p.escrow_id ? escrowLink(p.escrow_id, p.item_name) : p.order_id ? orderLink(p.order_id, p.item_name) : p.item_name}<br><span class="muted">${p.escrow_id ? `escrow ${p.escrow_id}` : `order ${p.order_id ?? ''}`} (${p.target_status})</span></td><td>${userLink(p.buyer_id, p.buyer_email)}</td>
<td>${rupiah(p.amount)}${reason === 'amount_mismatch' ? html`<br><span class="muted">gateway reported ${rupiah(Number(p.reported_amount ?? 0))}</span>` : ''}</td>
<td>${reason ? ATTENTION_LABEL[reason] : ''}${p.claim_reference ? html`<br><span class="muted">${p.claim_reference}</span>` : ''}<br><span class="muted">${p.provider}</span></td>
<td>${moves(p, reason)}</td>
</tr>`;
})}
</tbody></table>${nextPageLink(withFilters('/admin/payments', filters), page.next)}</section>`;
}

export function withdrawalsTable(page: QueuePage<StaffListed>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Withdrawals to approve</h1>
${queueFilterForm('/admin/withdrawals', 'withdrawal-filters', filters, 'Withdrawal or account id, e-mail, username, name')}
${rows.length === 0 ? html`<p id="none">No pending withdrawals.</p>` : ''}
<table id="withdrawals"><thead><tr><th>Requested</th><th>Who</th><th>Amount</th><th>Method</th><th>Risk</th><th>Decision</th></tr></thead><tbody>
${rows.map(
  ({ row: w, user }) => html`<tr data-id="${w.id}">
<td>${iso(w.created_at)}</td><td>${userLink(w.user_id, user ? user.full_name : w.user_id)}${user ? html`<br>${user.email}` : ''}</td>
<td>${rupiah(w.amount)}<br><span class="muted">net ${rupiah(w.net_amount)}</span></td><td>${w.method}</td>
<td>${w.risk_action}${w.risk_flags.length ? html`<br><span class="muted">${w.risk_flags.join(', ')}</span>` : ''}</td>
<td><form method="post" action="/admin/withdrawals/${w.id}/approve" data-confirm="Approve this payout?">${csrfField(csrf)}<input type="text" name="note" placeholder="Note${w.risk_action === 'review' ? ' (required)' : ''}" maxlength="2000"><button type="submit">Approve</button></form>
<form method="post" action="/admin/withdrawals/${w.id}/reject">${csrfField(csrf)}<input type="text" name="note" placeholder="Note" maxlength="2000"><button type="submit" class="danger">Reject</button></form></td>
</tr>`,
)}
</tbody></table>${nextPageLink(withFilters('/admin/withdrawals', filters), page.next)}</section>`;
}

export function usersTable(page: QueuePage<ListedUser>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Users</h1>
<form method="get" action="/admin/users" id="user-filters" class="filters" role="search">
<label>Search <input type="search" name="q" value="${filters.q}" maxlength="200" placeholder="Account id, e-mail, username or name"></label>
<label>Joined at least <input type="number" name="older_than_hours" min="1" max="8784" step="1" value="${filters.olderThanHours === null ? '' : String(filters.olderThanHours)}"> hours ago</label>
<button type="submit">Search</button> <a href="/admin/users">Clear</a>
</form>
<p class="muted">The newest accounts first.</p>
${rows.length === 0 ? html`<p id="none">No account matches.</p>` : ''}
<table id="users"><thead><tr><th>Account</th><th>Role</th><th>Status</th><th>Move</th></tr></thead><tbody>
${rows.map(
  (u) => html`<tr data-id="${u.id}">
<td>${userLink(u.id, u.full_name)}<br>${u.email} · @${u.username}</td><td>${u.role}</td><td class="status">${u.status}</td>
<td>${
    u.status === 'active'
      ? html`<form method="post" action="/admin/users/${u.id}/suspend" data-confirm="Suspend this account? Its sessions end.">${csrfField(csrf)}<input type="text" name="note" placeholder="Why" maxlength="2000"><button type="submit" class="danger">Suspend</button></form>`
      : u.status === 'suspended'
        ? html`<form method="post" action="/admin/users/${u.id}/reactivate">${csrfField(csrf)}<input type="text" name="note" placeholder="Why" maxlength="2000"><button type="submit">Reactivate</button></form>`
        : ''
  }</td>
</tr>`,
)}
</tbody></table>${nextPageLink(withFilters('/admin/users', filters), page.next)}</section>`;
}

export function ordersTable(page: QueuePage<ListedOrder>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Payment-service orders</h1>
${queueFilterForm('/admin/orders', 'order-filters', filters, 'Order or buyer id, e-mail, username, name, what is bought')}
${rows.length === 0 ? html`<p id="none">No orders waiting.</p>` : ''}
<table id="orders"><thead><tr><th>Created</th><th>Buyer</th><th>What</th><th>Total</th><th>Status</th><th>SLA</th><th>Move</th></tr></thead><tbody>
${rows.map(
  (o) => html`<tr data-id="${o.id}">
<td>${iso(o.created_at)}</td><td>${userLink(o.buyer_id, o.buyer_email)}</td>
<td>${orderLink(o.id, o.target_label ?? 'Order')}<br><span class="muted">${o.target_url}</span>${o.notes ? html`<br><span class="muted">${o.notes}</span>` : ''}</td>
<td>${rupiah(o.total)}<br><span class="muted">item ${rupiah(o.item_price)} + fee ${rupiah(o.service_fee)}</span></td>
<td class="status">${o.status}${o.paid_via ? html`<br><span class="muted">${o.paid_via}</span>` : ''}</td>
<td>${iso(o.sla_deadline_at)}</td>
<td>${orderMoves(o, csrf)}</td>
</tr>`,
)}
</tbody></table>${nextPageLink(withFilters('/admin/orders', filters), page.next)}</section>`;
}

// ---- KYB review (decision 0017) ------------------------------------------------------------

/** A KYB queue row as the admin API serializes it, with its workspace's id (for the link to the workspace's page). */
export type KybQueueItem = ReturnType<typeof serializeQueueItem> & { workspace_id: string };

const isoText = (s: string | null) => (s ? iso(new Date(s)) : '');

export function kybQueueTable(rows: KybQueueItem[], next: string | null, filters: QueueFilters): Html {
  return html`<section class="card"><h1>KYB applications to review</h1>
<p class="muted">Submitted applications, live workspaces' first, oldest submission first, a page at a time. Review takes 1 to 3 business days; open one to see its documents and decide.</p>
${queueFilterForm('/admin/kyb', 'kyb-filters', filters, 'Application, workspace or counterparty id, workspace, counterparty or legal name')}
${rows.length === 0 ? html`<p id="none">Nothing to review.</p>` : ''}
<table id="kyb"><thead><tr><th>Submitted</th><th>Due by</th><th>Applicant</th><th>Workspace</th><th>Whose</th><th>Version</th><th>Entity type</th><th></th></tr></thead><tbody>
${rows.map(
  (q) => html`<tr data-id="${q.id}">
<td>${isoText(q.submitted_at)}</td><td>${isoText(q.due_by)}</td>
<td>${q.name}${q.legal_name && q.legal_name !== q.name ? html`<br><span class="muted">${q.legal_name}</span>` : ''}</td>
<td>${workspaceLink(q.workspace_id, q.workspace_name)}</td><td>${q.subject_type === 'counterparty' ? 'Counterparty' : 'Workspace application'}</td>
<td>v${q.version}</td><td>${q.entity_type ?? ''}</td>
<td><a href="/admin/kyb/${q.id}" class="open">Open</a></td>
</tr>`,
)}
</tbody></table>${nextPageLink(withFilters('/admin/kyb', filters), next)}</section>`;
}

/** A signed file link as a path of this origin (the console and the file route are served together). */
function localPath(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

const kib = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KB`);
const last4 = (v: string | null) => (v ? `···· ${v}` : 'not given');
const entry = (label: string, value: Piece) => html`<dt>${label}</dt><dd>${value ?? ''}</dd>`;
type Piece = Html | string | number | null | undefined;

/** Fields a change request may name (the draft body's paths, the document slots); any other text may be typed. */
function changeFieldOptions(v: StaffApplication): string[] {
  const company = ['legal_name', 'entity_type', 'nib', 'npwp', 'country_code', 'address', 'industry', 'monthly_volume', 'website'].map((f) => `company.${f}`);
  const bank = ['bank_name', 'bank_account_holder', 'account_number'].map((f) => `bank.${f}`);
  return [...company, 'people', ...bank, ...slotsOf(v.application).map((s) => `documents.${s.key}`)];
}

const CHANGE_ROWS = 5;

function kybDecisions(v: StaffApplication, csrf: string): Html {
  const a = v.application;
  if (a.status !== 'submitted') {
    return html`<section class="card" id="decision"><h2>Decision</h2><p id="no-decision">This version is ${a.status}: there is nothing to decide.</p></section>`;
  }
  const note = html`<input type="text" name="note" placeholder="Note for the audit trail (optional)" maxlength="2000">`;
  const approveConfirm = v.subject.counterparty
    ? `Approve this application? ${v.subject.counterparty.name} becomes a verified counterparty.`
    : `Approve this application? ${v.subject.workspace.display_name} goes live at once.`;
  return html`<section class="card" id="decision"><h2>Decision</h2>
<form method="post" action="/admin/kyb/${a.id}/request-changes" id="request-changes">${csrfField(csrf)}
<h3>Request changes</h3>
<p class="muted">One row per change: the field or document, and what the applicant must do. Version ${a.version + 1} opens as a draft carrying these notes.</p>
<datalist id="kyb-fields">${changeFieldOptions(v).map((f) => html`<option value="${f}">`)}</datalist>
${Array.from(
  { length: CHANGE_ROWS },
  (_, i) => html`<div class="change-row"><input type="text" name="change_field" list="kyb-fields" maxlength="120" placeholder="Field (e.g. company.npwp)" aria-label="Field ${i + 1}" ${i === 0 ? html`required` : ''}><input type="text" name="change_note" maxlength="1000" placeholder="What to change" aria-label="Note ${i + 1}" ${i === 0 ? html`required` : ''}></div>`,
)}
${note}<button type="submit">Request changes</button></form>
<form method="post" action="/admin/kyb/${a.id}/approve" id="approve" data-confirm="${approveConfirm}">${csrfField(csrf)}
<h3>Approve</h3>
<label>Risk tier <select name="risk_tier" required>${RISK_TIERS.map((t) => html`<option value="${t}" ${t === 'standard' ? html`selected` : ''}>${t}</option>`)}</select></label>
${note}<button type="submit">Approve</button></form>
<form method="post" action="/admin/kyb/${a.id}/reject" id="reject" data-confirm="Reject this application? The applicant sees the reason.">${csrfField(csrf)}
<h3>Reject</h3>
<label>Reason (the applicant sees it) <input type="text" name="reason" minlength="2" maxlength="2000" required></label>
${note}<button type="submit" class="danger">Reject</button></form>
</section>`;
}

export function kybApplicationPage(v: StaffApplication, csrf: string): Html {
  const a = v.application;
  const s = v.subject;
  const slots = slotsOf(a);
  const personName = (id: string | null) => (id ? (a.people.find((p) => p.id === id)?.full_name ?? 'removed person') : null);
  const earlier = v.history.filter((h) => h.version < a.version && h.status === 'changes_requested' && h.change_requests.length > 0);
  const linksUntil = v.documents[0]?.expires_at ?? null;
  return html`<section class="card" id="kyb-application" data-id="${a.id}" data-status="${a.status}">
<p><a href="/admin/kyb">KYB queue</a></p>
<h1>KYB application: ${s.counterparty ? s.counterparty.name : s.workspace.display_name}, version ${a.version}</h1>
<dl>
${entry('Whose', s.counterparty ? html`Counterparty of ${s.workspace.display_name} <span class="muted">(${s.counterparty.kyb_status})</span>` : 'Workspace application')}
${entry('Workspace', html`${s.workspace.display_name} <span class="muted">${s.workspace.legal_name} · KYB ${s.workspace.kyb_status} · ${s.workspace.is_sandbox ? 'sandbox' : 'live'}</span>`)}
${entry('Status', html`<strong id="application-status">${a.status}</strong>`)}
${entry('Submitted', iso(a.submitted_at))}
${a.status === 'submitted' && a.submitted_at ? entry('Due by', iso(reviewDueBy(new Date(a.submitted_at)))) : ''}
${a.decided_at ? entry('Decided', iso(a.decided_at)) : ''}
${a.risk_tier_assigned ? entry('Risk tier', a.risk_tier_assigned) : ''}
${a.decision_reason ? entry('Reason', a.decision_reason) : ''}
</dl></section>
<section class="card" id="company"><h2>Company</h2><dl>
${entry('Legal name', a.legal_name)}${entry('Entity type', a.entity_type)}${entry('NIB', a.nib)}${entry('NPWP', a.npwp)}
${entry('Country', a.country_code)}${entry('Address', a.address)}${entry('Industry', a.industry)}${entry('Monthly volume', a.monthly_volume)}${entry('Website', a.website)}
</dl></section>
<section class="card" id="people"><h2>People</h2>
${a.people.length === 0 ? html`<p class="muted">No one listed.</p>` : ''}
<table><thead><tr><th>Name</th><th>Position</th><th>Roles</th><th>Identity</th><th>Nationality</th><th>Ownership</th></tr></thead><tbody>
${a.people.map(
  (p) => html`<tr data-person="${p.id}"><td>${p.full_name}</td><td>${p.position}</td><td>${p.roles.join(', ')}</td>
<td>${p.id_type === 'nik' ? 'NIK' : 'Passport'} <span class="last4">${last4(p.id_number_last4)}</span></td><td>${p.nationality}</td><td>${p.ownership_pct === null ? '' : `${p.ownership_pct}%`}</td></tr>`,
)}
</tbody></table></section>
<section class="card" id="bank"><h2>Bank account</h2><dl>
${entry('Bank', a.bank_name)}${entry('Holder', a.bank_account_holder)}${entry('Account number', html`<span class="last4">${last4(a.bank_account_last4)}</span>`)}
</dl></section>
<section class="card" id="documents"><h2>Documents</h2>
${v.documents.length === 0 ? html`<p class="muted">No documents.</p>` : html`<p class="muted">Each link is signed for you alone and works until ${iso(linksUntil)} UTC; reload the page for fresh links.</p>`}
<table><thead><tr><th>Document</th><th>File</th><th>Added</th><th></th></tr></thead><tbody>
${v.documents.map(
  (d) => html`<tr data-doc="${d.id}"><td>${slotOf(slots, d.doc_type, d.person_id)?.label ?? (personName(d.person_id) ? `${d.doc_type}: ${personName(d.person_id)}` : d.doc_type)}</td>
<td>${d.mime}, ${kib(d.size)}<br><span class="muted">sha256 ${d.sha256.slice(0, 16)}…</span></td><td>${iso(d.created_at)}</td>
<td><a href="${localPath(d.url)}" target="_blank" rel="noopener" class="doc-link">Open</a></td></tr>`,
)}
</tbody></table></section>
${
  earlier.length === 0
    ? ''
    : html`<section class="card" id="change-requests"><h2>Change requests of earlier versions</h2>
${earlier.map(
  (h) => html`<h3>Version ${h.version} <span class="muted">${iso(h.decided_at)}</span></h3><ul>${h.change_requests.map((c) => html`<li><strong>${c.field}</strong>: ${c.note}</li>`)}</ul>`,
)}</section>`
}
<section class="card" id="history"><h2>History</h2>
<table><thead><tr><th>Version</th><th>Status</th><th>Submitted</th><th>Decided</th><th>Risk tier / reason</th></tr></thead><tbody>
${v.history.map(
  (h) => html`<tr data-version="${h.version}"><td>${h.id === a.id ? html`<strong>v${h.version}</strong> (this page)` : html`<a href="/admin/kyb/${h.id}">v${h.version}</a>`}</td>
<td>${h.status}</td><td>${iso(h.submitted_at)}</td><td>${iso(h.decided_at)}</td><td>${h.risk_tier_assigned ?? ''}${h.decision_reason ? html`<span class="muted">${h.decision_reason}</span>` : ''}</td></tr>`,
)}
</tbody></table></section>
${kybDecisions(v, csrf)}`;
}

// ---- Enterprise deals (decision 0018): live funding to confirm, one deal, the fee override ---

/** An amount in the deal's currency (whole units): rupiah for IDR. */
const money = (amount: number, currency: string) => (currency === 'IDR' ? rupiah(amount) : `${currency} ${Math.trunc(amount).toLocaleString('id-ID')}`);

export function fundingTable(page: QueuePage<AwaitingRow>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Funding to confirm</h1>
<p class="muted">Milestones of live deals awaiting funding, oldest activation first, a page at a time. Confirm one once its funding amount (the amount plus the workspace's fee share) has arrived: the milestone becomes funded and the money is posted to the ledger.</p>
${queueFilterForm('/admin/funding', 'funding-filters', filters, 'Deal, milestone or workspace id, deal reference or title, milestone, workspace name')}
${rows.length === 0 ? html`<p id="none">Nothing to confirm.</p>` : ''}
<table id="funding"><thead><tr><th>Activated</th><th>Workspace</th><th>Deal</th><th>Milestone</th><th>Amount</th><th>Buyer fee</th><th>Funding to expect</th><th>Currency</th><th>Confirm</th></tr></thead><tbody>
${rows.map(
  (r) => html`<tr data-id="${r.milestone_id}" data-deal="${r.deal_id}">
<td>${iso(r.activated_at)}</td><td>${workspaceLink(r.workspace_id, r.workspace_name)}</td>
<td><a href="/admin/deals/${r.deal_id}" class="open">${r.reference}</a><br><span class="muted">${r.title}</span></td>
<td>${r.sequence_no}. ${r.milestone_title}</td>
<td>${money(r.amount, r.currency)}</td><td>${money(r.buyer_fee, r.currency)}</td><td class="expect"><strong>${money(r.funding_amount, r.currency)}</strong></td><td>${r.currency}</td>
<td><form method="post" action="/admin/funding/${r.milestone_id}/confirm" data-confirm="Confirm that ${money(r.funding_amount, r.currency)} arrived for milestone ${r.sequence_no} of ${r.reference}?">${csrfField(csrf)}<input type="text" name="note" placeholder="Note (e.g. the bank reference)" maxlength="2000"><button type="submit">Confirm</button></form></td>
</tr>`,
)}
</tbody></table>${nextPageLink(withFilters('/admin/funding', filters), page.next)}</section>`;
}

const ALLOCATION_LABEL: Record<Allocation, string> = {
  buyer: 'buyer: the workspace pays the fee',
  seller: 'seller: the counterparty bears the fee',
  split: 'split by percent',
};

function feeOverrideForm(v: StaffDeal, csrf: string): Html {
  const d = v.deal;
  if (v.status === 'cancelled') {
    return html`<section class="card" id="fee-override"><h2>Override the fee split</h2><p id="no-override">This deal is cancelled: its fee split cannot be changed.</p></section>`;
  }
  return html`<section class="card" id="fee-override"><h2>Override the fee split</h2>
<p class="muted">At both parties' request (spec 4.5 rule 6). The platform fee stays; only the shares of milestones not yet funded are recomputed. A split those shares cannot reach exactly is refused. The reason appears in the workspace's event feed.</p>
<form method="post" action="/admin/deals/${d.id}/fee-allocation" id="override" data-confirm="Change the fee split of ${d.reference}?">${csrfField(csrf)}
<label>Allocation <select name="fee_allocation" required>${ALLOCATIONS.map((a) => html`<option value="${a}" ${a === d.fee_allocation ? html`selected` : ''}>${ALLOCATION_LABEL[a]}</option>`)}</select></label>
<label>Workspace's share in percent (required with split; buyer means 100, seller 0) <input type="number" name="fee_buyer_percent" min="0" max="100" step="1" inputmode="numeric"></label>
<label>Reason <input type="text" name="reason" minlength="2" maxlength="2000" required></label>
<input type="text" name="note" placeholder="Note for the audit trail (optional)" maxlength="2000">
<button type="submit">Override</button></form></section>`;
}

/** Where a payout went: the destination kept on it at release (issue 42), never its instruction's current one. */
const payoutDestination = (d: PayoutListRow) => `${d.destination_bank_name} ${maskAccountNumber(d.destination_account_last4)}`;

function dealPayouts(rows: PayoutListRow[]): Html {
  return html`<section class="card" id="deal-payouts"><h2>Payouts</h2>
<p class="muted">Each payout shows the destination it was released to (label, bank, holder, masked number), as kept on the payout at release.</p>
${rows.length === 0 ? html`<p class="muted">No payouts.</p>` : ''}
<table><thead><tr><th>Queued</th><th>Milestone</th><th>Destination</th><th>Amount</th><th>Status</th></tr></thead><tbody>
${rows.map(
  (d) => html`<tr data-id="${d.id}" data-status="${d.status}">
<td>${iso(d.created_at)}</td><td>${d.milestone_sequence_no}. ${d.milestone_title}</td>
<td class="destination">${d.instruction_label}<br><span class="account">${payoutDestination(d)}</span><br><span class="muted holder">${d.destination_account_holder}</span></td>
<td class="amount">${money(d.amount, d.currency)}</td><td class="status">${d.status}${d.settled_at ? html`<br><span class="muted">settled ${iso(d.settled_at)}</span>` : ''}${d.failure_reason ? html`<br><span class="muted">${d.failure_reason}</span>` : ''}</td>
</tr>`,
)}
</tbody></table></section>`;
}

/** Each milestone's approval slots: round, slot, who decided and when, with their note. */
function dealApprovals(v: StaffDeal): Html {
  const rows = v.milestones.flatMap((ms) => (v.extras.approvals.get(ms.id) ?? []).map((a) => ({ ms, a })));
  return html`<section class="card" id="approvals"><h2>Approvals</h2>
${
  rows.length === 0
    ? html`<p class="muted">No approval slots yet (they open when evidence is submitted).</p>`
    : html`<table><thead><tr><th>Milestone</th><th>Round</th><th>Slot</th><th>Status</th><th>Approver</th><th>Decided</th><th>Note</th></tr></thead><tbody>
${rows.map(({ ms, a }) => html`<tr data-id="${a.id}"><td>${ms.sequence_no}. ${ms.title}</td><td>${a.round}</td><td>${a.slot}</td><td class="status">${a.status}</td><td>${a.approver_name ?? ''}</td><td>${iso(a.decided_at)}</td><td>${a.note ?? ''}</td></tr>`)}
</tbody></table>`
}</section>`;
}

/** The documents filed on the deal's milestones: type, title, who filed it, who may see it. */
function dealDocuments(v: StaffDeal): Html {
  const rows = v.milestones.flatMap((ms) => (v.extras.documents.get(ms.id) ?? []).map((d) => ({ ms, d })));
  return html`<section class="card" id="documents"><h2>Documents</h2>
${
  rows.length === 0
    ? html`<p class="muted">No documents on its milestones.</p>`
    : html`<table><thead><tr><th>Milestone</th><th>Type</th><th>Title</th><th>Filed by</th><th>Filed</th><th>Visible to</th><th>SHA-256</th></tr></thead><tbody>
${rows.map(({ ms, d }) => html`<tr data-id="${d.id}"><td>${ms.sequence_no}. ${ms.title}</td><td>${d.document_type}</td><td>${d.title}</td><td>${d.uploaded_by_name}</td><td>${iso(d.created_at)}</td><td>${d.visibility}</td><td class="muted">${d.checksum_sha256 ? d.checksum_sha256.slice(0, 12) : ''}</td></tr>`)}
</tbody></table>`
}</section>`;
}

export function dealPage(v: StaffDeal, csrf: string, payouts: PayoutListRow[] = []): Html {
  const d = v.deal;
  const w = v.workspace;
  const fee = serializeFee(d, v.milestones);
  const m = (amount: number) => money(amount, d.currency);
  return html`<section class="card" id="deal" data-id="${d.id}" data-status="${v.status}">
<p><a href="/admin/funding">Funding to confirm</a></p>
<h1>Deal ${d.reference}: ${d.title}</h1>
<dl>
${entry('Workspace', html`${workspaceLink(w.id, w.display_name)} <span class="muted">${w.legal_name} · ${w.is_sandbox ? 'sandbox' : 'live'}</span>`)}
${entry('Counterparty', html`${d.counterparty_name} <span class="muted">${d.counterparty_country_code} · KYB ${d.counterparty_kyb_status} · ${d.counterparty_relationship}</span>`)}
${entry('Status', html`<strong id="deal-status">${v.status}</strong>${d.is_test ? html` <span class="muted">(sandbox deal: no real money)</span>` : ''}`)}
${entry('Currency', d.currency)}
${entry('Owner', d.owner_name)}
${entry('Created', iso(d.created_at))}
${d.activated_at ? entry('Activated', iso(d.activated_at)) : ''}
${d.cancelled_at ? entry('Cancelled', iso(d.cancelled_at)) : ''}
</dl></section>
<section class="card" id="fee"><h2>Fee</h2><dl>
${entry('Rate', html`${fee.rate_percent}%${d.currency === 'IDR' ? html` <span class="muted">minimum ${rupiah(fee.min_fee)}</span>` : ''}${fee.tier ? html` <span class="muted">volume tier from ${rupiah(fee.tier.min_volume)}</span>` : ''}`)}
${entry('Platform fee', html`<span id="platform-fee">${m(fee.platform_fee)}</span>`)}
${entry('Allocation', html`<strong id="fee-allocation">${fee.allocation}</strong> <span id="fee-percents">workspace ${fee.buyer_percent}% · counterparty ${fee.seller_percent}%</span>`)}
${entry('Buyer fee (workspace)', html`<span id="buyer-fee">${m(fee.buyer_fee)}</span>`)}
${entry('Seller fee (counterparty)', html`<span id="seller-fee">${m(fee.seller_fee)}</span>`)}
${entry('Funding total', m(fee.funding_total))}
${entry('Payout total', m(fee.payout_total))}
${entry('Frozen', fee.frozen ? 'yes (activated)' : 'no (draft)')}
</dl></section>
<section class="card" id="milestones"><h2>Milestones</h2>
<table><thead><tr><th>No.</th><th>Title</th><th>Status</th><th>Amount</th><th>Buyer fee</th><th>Seller fee</th><th>Funding amount</th><th>Payout amount</th><th>Shares</th><th>Funded</th></tr></thead><tbody>
${v.milestones.map(
  (ms) => html`<tr data-id="${ms.id}" data-status="${ms.status}">
<td>${ms.sequence_no}</td><td>${ms.title}</td><td class="status">${ms.status}</td>
<td>${m(ms.amount)}</td><td class="buyer-fee">${m(ms.buyer_fee)}</td><td class="seller-fee">${m(ms.seller_fee)}</td><td>${m(ms.funding_amount)}</td><td>${m(ms.payout_amount)}</td>
<td>${feeSharesOpen(ms.status) ? 'open' : 'fixed'}</td><td>${iso(ms.funded_at)}${ms.funding_method ? html`<br><span class="muted">${ms.funding_method}</span>` : ''}</td>
</tr>`,
)}
</tbody></table></section>
${dealApprovals(v)}
${dealDocuments(v)}
${dealPayouts(payouts)}
${feeOverrideForm(v, csrf)}
<section class="card" id="events"><h2>Recent events</h2>
${v.events.length === 0 ? html`<p class="muted">No events.</p>` : ''}
<table><thead><tr><th>When</th><th>Event</th><th>By</th><th>Summary</th></tr></thead><tbody>
${v.events.map((e) => html`<tr data-event="${e.event}"><td>${iso(e.created_at)}</td><td>${e.event}</td><td>${e.actor_label ?? e.actor_name ?? ''}</td><td>${e.summary}</td></tr>`)}
</tbody></table></section>`;
}

// ---- Payouts and rulings (decision 0019, issue 27) -----------------------------------------

const sandboxMark = (isTest: boolean) => (isTest ? html`<br><span class="muted sandbox">sandbox: no real money</span>` : '');

/** The link to a staff queue's next page (review R4: every item reachable); nothing on the last page. */
export function nextPageLink(path: string, next: string | null): Html | '' {
  return next === null ? '' : html`<p><a id="next-page" href="${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(next)}">Next page</a></p>`;
}

export function instructionsTable(page: QueuePage<PendingInstruction>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Payout instructions to verify</h1>
<p class="muted">New counterparty bank destinations, ones that were edited, and every one of a workspace that went live: live workspaces first, then sandbox ones, each oldest pending first, ${String(QUEUE_PAGE)} to a page. Reveal the full account number (each reveal is recorded under your name), check it with the workspace outside the service (a call-back to a known contact, the bank's name check), then verify what you were shown: money is paid only to verified instructions, and verifying signs the label, bank, holder and number as revealed. If the instruction changed since, the verification is refused. Decline a destination you cannot confirm: the workspace sees your reason and may edit it (it comes back here) or delete it.</p>
${queueFilterForm('/admin/instructions', 'instruction-filters', filters, 'Instruction, workspace or counterparty id, workspace, counterparty, label, holder, bank')}
${rows.length === 0 ? html`<p id="none">Nothing to verify.</p>` : ''}
<table id="instructions"><thead><tr><th>Pending since</th><th>Workspace</th><th>Counterparty</th><th>Label</th><th>Bank</th><th>Account holder</th><th>Account number</th><th>Reveal and verify</th><th>Decline</th></tr></thead><tbody>
${rows.map(
  (p) => html`<tr data-id="${p.id}" data-sandbox="${p.workspace_is_sandbox ? 'true' : 'false'}">
<td>${iso(p.pending_since)}</td><td>${workspaceLink(p.workspace_id, p.workspace_name)}${sandboxMark(p.workspace_is_sandbox)}</td><td>${p.counterparty_name}</td><td>${p.label}</td>
<td>${p.bank_name}</td><td>${p.account_holder}</td><td class="account">${maskAccountNumber(p.account_number_last4)}</td>
<td><form method="post" action="/admin/instructions/${p.id}/reveal" class="reveal">${csrfField(csrf)}<input type="text" name="note" placeholder="Why (optional)" maxlength="2000"><button type="submit">Reveal</button></form></td>
<td><form method="post" action="/admin/instructions/${p.id}/decline" class="decline" data-confirm="Decline ${p.label} (${p.bank_name})? The workspace sees your reason.">${csrfField(csrf)}<input type="hidden" name="destination_version" value="${String(p.destination_version)}"><input type="text" name="reason" placeholder="Reason (the workspace sees it)" maxlength="1000" required><button type="submit">Decline</button></form></td>
</tr>`,
)}
</tbody></table>
${nextPageLink(withFilters('/admin/instructions', filters), page.next)}</section>`;
}

/**
 * One instruction revealed (issue 42): the full account number, what a verification signs
 * (live or sandbox money), and the verify form naming the `destination_version` shown here.
 * Answered to a POST (the reveal is audited), never cached.
 */
export function revealedInstruction(p: InstructionForStaff, accountNumber: string, csrf: string): Html {
  const canVerify = p.status === 'pending_verification';
  return html`<section class="card" id="revealed" data-id="${p.id}" data-version="${String(p.destination_version)}">
<p><a href="/admin/instructions">Payout instructions to verify</a></p>
<h1>Payout instruction: ${p.label}</h1>
<p class="muted">This reveal is recorded in the staff audit under your name.</p>
<dl>
${entry('Workspace', html`${workspaceLink(p.workspace_id, p.workspace_name)} <span class="muted">${p.workspace_is_sandbox ? 'sandbox: verifying signs for sandbox money only' : 'live: verifying signs for real money'}</span>`)}
${entry('Counterparty', p.counterparty_name)}
${entry('Label', html`<span id="label">${p.label}</span>`)}
${entry('Bank', html`<span id="bank">${p.bank_name}</span>`)}
${entry('Account holder', html`<span id="holder">${p.account_holder}</span>`)}
${entry('Account number', html`<strong id="account-number" class="account">${accountNumber}</strong>`)}
${entry('Status', html`<span id="status">${p.status}</span>`)}
${entry('Version', html`<span id="version">${String(p.destination_version)}</span>`)}
</dl>
${
  canVerify
    ? html`<form method="post" action="/admin/instructions/${p.id}/verify" id="verify" data-confirm="Verify ${p.bank_name} ${accountNumber} (${p.account_holder}) for ${p.counterparty_name}? Payouts may then be sent to it.">${csrfField(csrf)}<input type="hidden" name="destination_version" value="${String(p.destination_version)}"><input type="text" name="note" placeholder="Note (how it was checked)" maxlength="2000"><button type="submit">Verify this destination</button></form>`
    : html`<p class="muted" id="no-verify">${p.status === 'declined' ? 'Declined: the workspace may edit it (it comes back to the queue) or delete it.' : 'Already verified.'}</p>`
}
</section>`;
}

/** An open payout as the console lists it (shared/payouts/staff.ts `openPayouts`). */
export type OpenPayout = PayoutListRow & { workspace_name: string };

export function payoutsTable(page: QueuePage<OpenPayout>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Payouts to settle or fail</h1>
<p class="muted">Queued and processing payouts of released milestones, live ones first, oldest first, a page at a time. With no payout provider, pay each by bank transfer and settle it; fail one the bank refused, with the reason (the workspace sees it): its money returns to the milestone for a new release. A payout the worker is sending cannot be moved until its claim runs out.</p>
${queueFilterForm('/admin/payouts', 'payout-filters', filters, 'Payout, deal, milestone or workspace id, deal reference, milestone, counterparty, workspace, payout reference')}
${rows.length === 0 ? html`<p id="none">No open payouts.</p>` : ''}
<table id="payouts"><thead><tr><th>Queued</th><th>Workspace</th><th>Deal</th><th>Destination</th><th>Amount</th><th>Status</th><th>Settle</th><th>Fail</th></tr></thead><tbody>
${rows.map((d) => {
  const amount = money(d.amount, d.currency);
  const destination = payoutDestination(d);
  return html`<tr data-id="${d.id}" data-deal="${d.deal_id}">
<td>${iso(d.created_at)}</td><td>${workspaceLink(d.workspace_id, d.workspace_name)}${sandboxMark(d.is_test)}</td>
<td><a href="/admin/deals/${d.deal_id}" class="open">${d.deal_reference}</a><br><span class="muted">${d.milestone_sequence_no}. ${d.milestone_title}</span></td>
<td>${d.instruction_label}<br><span class="account">${destination}</span><br><span class="muted">${d.destination_account_holder} · ${d.counterparty_name}</span>
<form method="post" action="/admin/instructions/${d.payout_instruction_id}/reveal" class="reveal">${csrfField(csrf)}<input type="hidden" name="note" value="To pay payout ${d.id} by hand"><button type="submit">Reveal the account number</button></form></td>
<td class="amount"><strong>${amount}</strong></td>
<td class="status">${d.status}${d.status === 'processing' && d.lease_until ? html`<br><span class="muted">claimed until ${iso(d.lease_until)}</span>` : ''}${d.attempts > 0 ? html`<br><span class="muted">attempts ${d.attempts}</span>` : ''}</td>
<td><form method="post" action="/admin/payouts/${d.id}/settle" class="settle" data-confirm="Settle ${amount} to ${destination}? Only once the transfer has left.">${csrfField(csrf)}<input type="text" name="note" placeholder="Note (e.g. the transfer reference)" maxlength="2000"><button type="submit">Settle</button></form></td>
<td><form method="post" action="/admin/payouts/${d.id}/fail" class="fail" data-confirm="Fail this payout of ${amount}? The money returns to the milestone.">${csrfField(csrf)}<input type="text" name="reason" placeholder="Reason (required; the workspace sees it)" maxlength="1000" required><input type="text" name="note" placeholder="Note" maxlength="2000"><button type="submit" class="danger">Fail</button></form></td>
</tr>`;
})}
</tbody></table>${nextPageLink(withFilters('/admin/payouts', filters), page.next)}</section>`;
}

export function rulingsTable(page: QueuePage<DisputedRow>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  return html`<section class="card"><h1>Disputed deal milestones to rule</h1>
<p class="muted">Milestones the workspace disputed, live deals first, oldest dispute first, a page at a time. Release: the milestone is approved again and the workspace releases it as usual. Refund: everything held, with the workspace's fee share, goes back to the workspace. Split: the release amount (more than the counterparty's fee share, less than the amount held) stays for the counterparty and the rest is refunded now.</p>
${queueFilterForm('/admin/rulings', 'ruling-filters', filters, 'Deal, milestone or workspace id, deal reference or title, milestone, workspace name')}
${rows.length === 0 ? html`<p id="none">Nothing to rule.</p>` : ''}
<table id="rulings"><thead><tr><th>Disputed</th><th>Workspace</th><th>Deal</th><th>Milestone</th><th>Amount</th><th>Seller fee</th><th>Reason</th><th>Ruling</th></tr></thead><tbody>
${rows.map((r) => {
  const held = r.amount - r.refunded_amount;
  return html`<tr data-id="${r.milestone_id}" data-deal="${r.deal_id}">
<td>${iso(r.disputed_at)}</td><td>${workspaceLink(r.workspace_id, r.workspace_name)}${sandboxMark(r.is_test)}</td>
<td><a href="/admin/deals/${r.deal_id}" class="open">${r.reference}</a><br><span class="muted">${r.title}</span></td>
<td>${r.sequence_no}. ${r.milestone_title}</td>
<td class="amount">${money(r.amount, r.currency)}${r.refunded_amount > 0 ? html`<br><span class="muted held">held ${money(held, r.currency)}: ${money(r.refunded_amount, r.currency)} refunded by an earlier ruling</span>` : ''}</td><td class="seller-fee">${money(r.seller_fee, r.currency)}</td><td class="reason">${r.dispute_reason ?? ''}</td>
<td><form method="post" action="/admin/rulings/${r.milestone_id}/resolve" data-confirm="Record this ruling on milestone ${r.sequence_no} of ${r.reference}? Refund and split move money at once.">${csrfField(csrf)}
<select name="outcome" required aria-label="Ruling"><option value="release">Release to the counterparty</option><option value="refund">Refund the workspace</option><option value="split">Split</option></select>
<label>Release amount (split only, ${money(r.seller_fee + 1, r.currency)} to ${money(held - 1, r.currency)}) <input type="number" name="release_amount" min="${r.seller_fee + 1}" max="${held - 1}" step="1" inputmode="numeric"></label>
<input type="text" name="note" placeholder="Note (why)" maxlength="2000">
<button type="submit">Rule</button></form></td>
</tr>`;
})}
</tbody></table>${nextPageLink(withFilters('/admin/rulings', filters), page.next)}</section>`;
}

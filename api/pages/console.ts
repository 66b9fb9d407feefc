/**
 * Templates of the operator console (staff pages), in the staff member's language: every
 * visible string comes from the dictionary (console-text.ts) the template is given as `t`.
 * Every form carries the session's CSRF token.
 */
import type { DisputeView } from '../../shared/disputes/repo.js';
import { ORDERS_TO_MOVE, type ConsoleCounts, type ListedOrder, type ListedUser, type PendingInstruction } from '../../shared/checkout/console.js';
import { ALLOCATIONS, feeSharesOpen } from '../../shared/deals/fees.js';
import type { AwaitingRow, DisputedRow } from '../../shared/deals/repo.js';
import { serializeFee } from '../../shared/deals/serialize.js';
import type { StaffDeal } from '../../shared/deals/staff.js';
import type { StaffApplication } from '../../shared/kyb/review.js';
import type { serializeQueueItem } from '../../shared/kyb/serialize.js';
import { reviewDueBy, slotOf, slotsOf } from '../../shared/kyb/slots.js';
import { RISK_TIERS } from '../../shared/kyb/states.js';
import { attentionOf } from '../../shared/payments/manual.js';
import { ATTENTION_REASONS, type StaffPaymentRow } from '../../shared/payments/repo.js';
import { maskAccountNumber } from '../../shared/payouts/instruction-serialize.js';
import type { InstructionForStaff } from '../../shared/payouts/instructions-repo.js';
import { OPEN_PAYOUT_STATUSES, type PayoutListRow } from '../../shared/payouts/repo.js';
import { QUEUE_PAGE, type QueuePage } from '../../shared/staff/queue.js';
import type { StaffListed } from '../../shared/withdrawals/service.js';
import { QUEUE_DASHBOARD_PATH } from '../routes/admin-queues.js';
import { backField, escrowLink, orderLink, orderMoves, paymentMoves, userLink, withdrawalMoves, workspaceLink } from './console-records.js';
import type { ConsoleSection, ConsoleText } from './console-text.js';
import { csrfField, html, rupiah, type Html } from './html.js';

export type { ConsoleSection } from './console-text.js';

const iso = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 16) : '');

/** The link a section's nav entry opens (also where the language switch returns from a page answering a POST). */
export const SECTION_PATH: Record<ConsoleSection, string> = {
  overview: '/admin',
  disputes: '/admin/disputes',
  payments: '/admin/payments',
  withdrawals: '/admin/withdrawals',
  orders: '/admin/orders',
  kyb: '/admin/kyb',
  funding: '/admin/funding',
  instructions: '/admin/instructions',
  payouts: '/admin/payouts',
  rulings: '/admin/rulings',
  users: '/admin/users',
};

/** The console's nav: its sections, Bull Board, the link to the other language (back to `here`: this page's path and query), sign-out. */
export function consoleNav(t: ConsoleText, active: ConsoleSection, who: string, csrf: string, here: string): Html {
  const link = (section: ConsoleSection) =>
    html`<a href="${SECTION_PATH[section]}" ${section === active ? html`aria-current="page"` : ''}>${t.nav[section]}</a>`;
  const sections = Object.keys(SECTION_PATH) as ConsoleSection[];
  return html`<nav class="console card">
${sections.map(link)}<a href="${QUEUE_DASHBOARD_PATH}" id="queues-link">${t.nav.queues}</a>
<a href="/admin/language/${t.other.lang}?next=${encodeURIComponent(here)}" id="lang-switch" lang="${t.other.lang}" hreflang="${t.other.lang}">${t.other.name}</a>
<span class="muted">${who}</span>
<form method="post" action="/admin/sign-out" class="inline">${csrfField(csrf)}<button type="submit" class="copy">${t.nav.signOut}</button></form>
</nav>`;
}

export function flash(t: ConsoleText, done: unknown): Html {
  return typeof done === 'string' && /^[a-z_.]{1,40}$/.test(done) ? html`<p class="notice" id="flash">${t.done(done)}</p>` : html``;
}

export function overview(t: ConsoleText, counts: ConsoleCounts): Html {
  const o = t.overview;
  return html`<section class="card" id="overview"><h1>${o.heading}</h1><ul>
<li><a href="/admin/disputes">${o.disputes}</a>: <strong id="count-disputes">${counts.disputes}</strong></li>
<li><a href="/admin/payments">${o.payments}</a>: <strong id="count-payments">${counts.payments}</strong></li>
<li><a href="/admin/withdrawals">${o.withdrawals}</a>: <strong id="count-withdrawals">${counts.withdrawals}</strong></li>
<li><a href="/admin/orders">${o.orders}</a>: <strong id="count-orders">${counts.orders}</strong></li>
<li><a href="/admin/kyb">${o.kyb}</a>: <strong id="count-kyb">${counts.kyb}</strong></li>
<li><a href="/admin/funding">${o.funding}</a>: <strong id="count-funding">${counts.funding}</strong></li>
<li><a href="/admin/instructions">${o.instructions}</a>: <strong id="count-instructions">${counts.instructions}</strong></li>
<li><a href="/admin/payouts">${o.payouts}</a>: <strong id="count-payouts">${counts.payouts}</strong></li>
<li><a href="/admin/rulings">${o.rulings}</a>: <strong id="count-rulings">${counts.rulings}</strong></li>
<li><a href="/admin/users">${o.users}</a> ${o.usersMoves}</li>
<li><a href="${QUEUE_DASHBOARD_PATH}">${o.queues}</a></li>
</ul></section>`;
}

/** A queue's search, waiting and status filters as the page shows them back (issue 46); `status` 'all' when not narrowed. */
export interface QueueFilters {
  q: string;
  olderThanHours: number | null;
  status: string;
}

/** The dispute queue's (its status filter has its own choices: open and on hold, open, on hold). */
export type DisputeFilters = QueueFilters;

/** `path` with the filters' query (empty ones and defaults left out), for a queue's page links. */
function withFilters(path: string, f: QueueFilters): string {
  const params = new URLSearchParams();
  if (f.status !== 'all') params.set('status', f.status);
  if (f.q !== '') params.set('q', f.q);
  if (f.olderThanHours !== null) params.set('older_than_hours', String(f.olderThanHours));
  const query = params.toString();
  return query === '' ? path : `${path}?${query}`;
}

/** A queue's filter form: the search (`placeholder` says what it finds), what `more` adds, how long an item has waited. */
function queueFilterForm(t: ConsoleText, action: string, id: string, f: QueueFilters, placeholder: string, more: Html | '' = ''): Html {
  const w = t.filters;
  return html`<form method="get" action="${action}" id="${id}" class="filters" role="search">
<label>${w.search} <input type="search" name="q" value="${f.q}" maxlength="200" placeholder="${placeholder}"></label>
${more}<label>${w.waitingAtLeast} <input type="number" name="older_than_hours" min="1" max="8784" step="1" value="${f.olderThanHours === null ? '' : String(f.olderThanHours)}"> ${w.hours}</label>
<button type="submit">${w.filter}</button> <a href="${action}">${w.clear}</a>
</form>
<p class="muted">${w.longestFirst}</p>`;
}

function disputeFilterForm(t: ConsoleText, f: DisputeFilters): Html {
  const option = (value: string, label: string) => html`<option value="${value}"${f.status === value ? html` selected` : ''}>${label}</option>`;
  const status = html`<label>${t.c.status} <select name="status">${option('all', t.disputes.openAndOnHold)}${option('open', t.disputes.open)}${option('on_hold', t.disputes.onHold)}</select></label>
`;
  return queueFilterForm(t, '/admin/disputes', 'dispute-filters', f, t.disputes.placeholder, status);
}

/** A status filter of a queue: `all` (labelled `allLabel`) and each status the queue holds, labelled. */
function statusSelect(t: ConsoleText, f: QueueFilters, options: readonly (readonly [string, string])[], allLabel = t.filters.all): Html {
  const option = (value: string, label: string) => html`<option value="${value}"${f.status === value ? html` selected` : ''}>${label}</option>`;
  return html`<label>${t.c.status} <select name="status">${option('all', allLabel)}${options.map(([value, label]) => option(value, label))}</select></label>
`;
}

/** A table's header row. */
const head = (labels: readonly string[]) => html`<thead><tr>${labels.map((l) => html`<th>${l}</th>`)}</tr></thead>`;

export function disputesTable(t: ConsoleText, page: QueuePage<DisputeView>, csrf: string, filters: DisputeFilters): Html {
  const rows = page.rows;
  const c = t.c;
  return html`<section class="card"><h1>${t.disputes.heading}</h1>
${disputeFilterForm(t, filters)}
${rows.length === 0 ? html`<p id="none">${c.nothingToRule}</p>` : ''}
<table id="disputes">${head([t.disputes.opened, t.disputes.escrow, t.disputes.parties, c.reason, c.status, c.ruling])}<tbody>
${rows.map(
  (d) => html`<tr data-id="${d.id}">
<td>${iso(d.created_at)}</td>
<td>${escrowLink(d.escrow_id, d.item_name)}<br>${rupiah(d.amount)}<br><span class="muted">${d.escrow_id}</span></td>
<td>${c.buyer}: ${userLink(d.buyer_id, d.buyer_full_name)} &lt;${d.buyer_email}&gt;<br>${c.seller}: ${userLink(d.seller_id, d.seller_full_name)} &lt;${d.seller_email}&gt;</td>
<td>${d.reason_category}<br><span class="muted">${d.description}</span></td>
<td class="status">${d.status}</td>
<td><form method="post" action="/admin/disputes/${d.id}/resolve" data-confirm="${c.confirmRuling}">
${csrfField(csrf)}
<select name="outcome" required aria-label="${c.ruling}"><option value="release">${c.releaseToSeller}</option><option value="refund">${c.refundBuyer}</option><option value="hold">${c.hold}</option></select>
<input type="text" name="note" placeholder="${c.noteWhy}" maxlength="2000">
<button type="submit">${c.rule}</button>
</form></td>
</tr>`,
)}
</tbody></table>${nextPageLink(t, withFilters('/admin/disputes', filters), page.next)}</section>`;
}

export function paymentsTable(t: ConsoleText, page: QueuePage<StaffPaymentRow>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const w = t.payments;
  return html`<section class="card"><h1>${w.heading}</h1>
<p class="muted">${w.intro}</p>
${queueFilterForm(t, '/admin/payments', 'payment-filters', filters, w.placeholder, statusSelect(t, filters, ATTENTION_REASONS.map((r) => [r, w.attention[r]] as const)))}
${rows.length === 0 ? html`<p id="none">${w.nothing}</p>` : ''}
<table id="payments">${head([c.created, w.for, c.buyer, c.amount, w.why, w.decision])}<tbody>
${rows.map((p) => {
  const reason = attentionOf(p);
  return html`<tr data-id="${p.id}" data-attention="${reason ?? ''}">
<td>${iso(p.created_at)}${p.claimed_at ? html`<br><span class="muted">${w.claimedAt(iso(p.claimed_at))}</span>` : ''}</td><td>${p.escrow_id ? escrowLink(p.escrow_id, p.item_name) : p.order_id ? orderLink(p.order_id, p.item_name) : p.item_name}<br><span class="muted">${p.escrow_id ? w.escrowRef(p.escrow_id) : w.orderRef(p.order_id ?? '')} (${p.target_status})</span></td><td>${userLink(p.buyer_id, p.buyer_email)}</td>
<td>${rupiah(p.amount)}${reason === 'amount_mismatch' ? html`<br><span class="muted">${w.gatewayReported(rupiah(Number(p.reported_amount ?? 0)))}</span>` : ''}</td>
<td>${reason ? w.attention[reason] : ''}${p.claim_reference ? html`<br><span class="muted">${p.claim_reference}</span>` : ''}<br><span class="muted">${p.provider}</span></td>
<td>${paymentMoves(t, p, csrf)}</td>
</tr>`;
})}
</tbody></table>${nextPageLink(t, withFilters('/admin/payments', filters), page.next)}</section>`;
}

export function withdrawalsTable(t: ConsoleText, page: QueuePage<StaffListed>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const x = t.withdrawals;
  return html`<section class="card"><h1>${x.heading}</h1>
${queueFilterForm(t, '/admin/withdrawals', 'withdrawal-filters', filters, x.placeholder)}
${rows.length === 0 ? html`<p id="none">${x.nothing}</p>` : ''}
<table id="withdrawals">${head([c.requested, x.who, c.amount, c.method, x.risk, x.decision])}<tbody>
${rows.map(
  ({ row: w, user }) => html`<tr data-id="${w.id}">
<td>${iso(w.created_at)}</td><td>${userLink(w.user_id, user ? user.full_name : w.user_id)}${user ? html`<br>${user.email}` : ''}</td>
<td>${rupiah(w.amount)}<br><span class="muted">${c.net(rupiah(w.net_amount))}</span></td><td>${w.method}</td>
<td>${w.risk_action}${w.risk_flags.length ? html`<br><span class="muted">${w.risk_flags.join(', ')}</span>` : ''}</td>
<td>${withdrawalMoves(t, w, csrf)}</td>
</tr>`,
)}
</tbody></table>${nextPageLink(t, withFilters('/admin/withdrawals', filters), page.next)}</section>`;
}

export function usersTable(t: ConsoleText, page: QueuePage<ListedUser>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const x = t.users;
  return html`<section class="card"><h1>${x.heading}</h1>
<form method="get" action="/admin/users" id="user-filters" class="filters" role="search">
<label>${t.filters.search} <input type="search" name="q" value="${filters.q}" maxlength="200" placeholder="${x.placeholder}"></label>
<label>${x.joinedAtLeast} <input type="number" name="older_than_hours" min="1" max="8784" step="1" value="${filters.olderThanHours === null ? '' : String(filters.olderThanHours)}"> ${x.hoursAgo}</label>
<button type="submit">${t.filters.search}</button> <a href="/admin/users">${t.filters.clear}</a>
</form>
<p class="muted">${x.newestFirst}</p>
${rows.length === 0 ? html`<p id="none">${x.nothing}</p>` : ''}
<table id="users">${head([x.account, c.role, c.status, x.move])}<tbody>
${rows.map(
  (u) => html`<tr data-id="${u.id}">
<td>${userLink(u.id, u.full_name)}<br>${u.email} · @${u.username}</td><td>${u.role}</td><td class="status">${u.status}</td>
<td>${
    u.status === 'active'
      ? html`<form method="post" action="/admin/users/${u.id}/suspend" data-confirm="${x.confirmSuspend}">${csrfField(csrf)}<input type="text" name="note" placeholder="${c.why}" maxlength="2000"><button type="submit" class="danger">${c.suspend}</button></form>`
      : u.status === 'suspended'
        ? html`<form method="post" action="/admin/users/${u.id}/reactivate">${csrfField(csrf)}<input type="text" name="note" placeholder="${c.why}" maxlength="2000"><button type="submit">${c.reactivate}</button></form>`
        : ''
  }</td>
</tr>`,
)}
</tbody></table>${nextPageLink(t, withFilters('/admin/users', filters), page.next)}</section>`;
}

export function ordersTable(t: ConsoleText, page: QueuePage<ListedOrder>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const x = t.orders;
  return html`<section class="card"><h1>${x.heading}</h1>
${queueFilterForm(t, '/admin/orders', 'order-filters', filters, x.placeholder, statusSelect(t, filters, ORDERS_TO_MOVE.map((s) => [s, s] as const)))}
${rows.length === 0 ? html`<p id="none">${x.nothing}</p>` : ''}
<table id="orders">${head([c.created, c.buyer, c.what, c.total, c.status, x.sla, x.move])}<tbody>
${rows.map(
  (o) => html`<tr data-id="${o.id}">
<td>${iso(o.created_at)}</td><td>${userLink(o.buyer_id, o.buyer_email)}</td>
<td>${orderLink(o.id, o.target_label ?? x.order)}<br><span class="muted">${o.target_url}</span>${o.notes ? html`<br><span class="muted">${o.notes}</span>` : ''}</td>
<td>${rupiah(o.total)}<br><span class="muted">${c.itemPlusFee(rupiah(o.item_price), rupiah(o.service_fee))}</span></td>
<td class="status">${o.status}${o.paid_via ? html`<br><span class="muted">${o.paid_via}</span>` : ''}</td>
<td>${iso(o.sla_deadline_at)}</td>
<td>${orderMoves(t, o, csrf)}</td>
</tr>`,
)}
</tbody></table>${nextPageLink(t, withFilters('/admin/orders', filters), page.next)}</section>`;
}

// ---- KYB review (decision 0017) ------------------------------------------------------------

/** A KYB queue row as the admin API serializes it, with its workspace's id (for the link to the workspace's page). */
export type KybQueueItem = ReturnType<typeof serializeQueueItem> & { workspace_id: string };

const isoText = (s: string | null) => (s ? iso(new Date(s)) : '');

export function kybQueueTable(t: ConsoleText, rows: KybQueueItem[], next: string | null, filters: QueueFilters): Html {
  const c = t.c;
  const k = t.kyb;
  return html`<section class="card"><h1>${k.heading}</h1>
<p class="muted">${k.intro}</p>
${queueFilterForm(t, '/admin/kyb', 'kyb-filters', filters, k.placeholder)}
${rows.length === 0 ? html`<p id="none">${k.nothing}</p>` : ''}
<table id="kyb">${head([c.submitted, k.dueBy, k.applicant, c.workspace, k.whose, c.version, c.entityType, ''])}<tbody>
${rows.map(
  (q) => html`<tr data-id="${q.id}">
<td>${isoText(q.submitted_at)}</td><td>${isoText(q.due_by)}</td>
<td>${q.name}${q.legal_name && q.legal_name !== q.name ? html`<br><span class="muted">${q.legal_name}</span>` : ''}</td>
<td>${workspaceLink(q.workspace_id, q.workspace_name)}</td><td>${q.subject_type === 'counterparty' ? c.counterparty : k.workspaceApplication}</td>
<td>v${q.version}</td><td>${q.entity_type ?? ''}</td>
<td><a href="/admin/kyb/${q.id}" class="open">${c.open}</a></td>
</tr>`,
)}
</tbody></table>${nextPageLink(t, withFilters('/admin/kyb', filters), next)}</section>`;
}

/** A signed file link as a path of this origin (the console and the file route are served together). */
function localPath(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

const kib = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KB`);
const last4 = (t: ConsoleText, v: string | null) => (v ? `···· ${v}` : t.kyb.notGiven);
const entry = (label: string, value: Piece) => html`<dt>${label}</dt><dd>${value ?? ''}</dd>`;
type Piece = Html | string | number | null | undefined;

/** Fields a change request may name (the draft body's paths, the document slots); any other text may be typed. */
function changeFieldOptions(v: StaffApplication): string[] {
  const company = ['legal_name', 'entity_type', 'nib', 'npwp', 'country_code', 'address', 'industry', 'monthly_volume', 'website'].map((f) => `company.${f}`);
  const bank = ['bank_name', 'bank_account_holder', 'account_number'].map((f) => `bank.${f}`);
  return [...company, 'people', ...bank, ...slotsOf(v.application).map((s) => `documents.${s.key}`)];
}

const CHANGE_ROWS = 5;

function kybDecisions(t: ConsoleText, v: StaffApplication, csrf: string): Html {
  const a = v.application;
  const c = t.c;
  const k = t.kyb;
  if (a.status !== 'submitted') {
    return html`<section class="card" id="decision"><h2>${k.decision}</h2><p id="no-decision">${k.nothingToDecide(a.status)}</p></section>`;
  }
  const note = html`<input type="text" name="note" placeholder="${c.auditNote}" maxlength="2000">`;
  const approveConfirm = v.subject.counterparty ? k.confirmApproveCounterparty(v.subject.counterparty.name) : k.confirmApproveWorkspace(v.subject.workspace.display_name);
  return html`<section class="card" id="decision"><h2>${k.decision}</h2>
<form method="post" action="/admin/kyb/${a.id}/request-changes" id="request-changes">${csrfField(csrf)}
<h3>${k.requestChanges}</h3>
<p class="muted">${k.requestChangesIntro(a.version + 1)}</p>
<datalist id="kyb-fields">${changeFieldOptions(v).map((f) => html`<option value="${f}">`)}</datalist>
${Array.from(
  { length: CHANGE_ROWS },
  (_, i) => html`<div class="change-row"><input type="text" name="change_field" list="kyb-fields" maxlength="120" placeholder="${k.fieldPlaceholder}" aria-label="${k.fieldLabel(i + 1)}" ${i === 0 ? html`required` : ''}><input type="text" name="change_note" maxlength="1000" placeholder="${k.whatToChange}" aria-label="${k.noteLabel(i + 1)}" ${i === 0 ? html`required` : ''}></div>`,
)}
${note}<button type="submit">${k.requestChanges}</button></form>
<form method="post" action="/admin/kyb/${a.id}/approve" id="approve" data-confirm="${approveConfirm}">${csrfField(csrf)}
<h3>${c.approve}</h3>
<label>${c.riskTier} <select name="risk_tier" required>${RISK_TIERS.map((tier) => html`<option value="${tier}" ${tier === 'standard' ? html`selected` : ''}>${tier}</option>`)}</select></label>
${note}<button type="submit">${c.approve}</button></form>
<form method="post" action="/admin/kyb/${a.id}/reject" id="reject" data-confirm="${k.confirmReject}">${csrfField(csrf)}
<h3>${c.reject}</h3>
<label>${k.rejectReason} <input type="text" name="reason" minlength="2" maxlength="2000" required></label>
${note}<button type="submit" class="danger">${c.reject}</button></form>
</section>`;
}

export function kybApplicationPage(t: ConsoleText, v: StaffApplication, csrf: string): Html {
  const a = v.application;
  const s = v.subject;
  const c = t.c;
  const k = t.kyb;
  const slots = slotsOf(a);
  const personName = (id: string | null) => (id ? (a.people.find((p) => p.id === id)?.full_name ?? k.removedPerson) : null);
  // The slot's label in the staff member's language (a person's document names the person, as the slot's own label does).
  const docLabel = (d: { doc_type: string; person_id: string | null }): string => {
    const slot = slotOf(slots, d.doc_type, d.person_id);
    if (!slot) return personName(d.person_id) ? `${d.doc_type}: ${personName(d.person_id)}` : d.doc_type;
    return slot.person_id ? `${k.docTypes[slot.type]}: ${personName(slot.person_id)}` : k.docTypes[slot.type];
  };
  const earlier = v.history.filter((h) => h.version < a.version && h.status === 'changes_requested' && h.change_requests.length > 0);
  const linksUntil = v.documents[0]?.expires_at ?? null;
  return html`<section class="card" id="kyb-application" data-id="${a.id}" data-status="${a.status}">
<p><a href="/admin/kyb">${k.queueLink}</a></p>
<h1>${k.applicationHeading(s.counterparty ? s.counterparty.name : s.workspace.display_name, a.version)}</h1>
<dl>
${entry(k.whose, s.counterparty ? html`${k.counterpartyOf(s.workspace.display_name)} <span class="muted">(${s.counterparty.kyb_status})</span>` : k.workspaceApplication)}
${entry(c.workspace, html`${s.workspace.display_name} <span class="muted">${s.workspace.legal_name} · ${k.kybStatus(s.workspace.kyb_status)} · ${s.workspace.is_sandbox ? c.sandbox : c.live}</span>`)}
${entry(c.status, html`<strong id="application-status">${a.status}</strong>`)}
${entry(c.submitted, iso(a.submitted_at))}
${a.status === 'submitted' && a.submitted_at ? entry(k.dueBy, iso(reviewDueBy(new Date(a.submitted_at)))) : ''}
${a.decided_at ? entry(c.decided, iso(a.decided_at)) : ''}
${a.risk_tier_assigned ? entry(c.riskTier, a.risk_tier_assigned) : ''}
${a.decision_reason ? entry(c.reason, a.decision_reason) : ''}
</dl></section>
<section class="card" id="company"><h2>${k.company}</h2><dl>
${entry(c.legalName, a.legal_name)}${entry(c.entityType, a.entity_type)}${entry(k.nib, a.nib)}${entry(k.npwp, a.npwp)}
${entry(c.country, a.country_code)}${entry(k.address, a.address)}${entry(k.industry, a.industry)}${entry(k.monthlyVolume, a.monthly_volume)}${entry(k.website, a.website)}
</dl></section>
<section class="card" id="people"><h2>${k.people}</h2>
${a.people.length === 0 ? html`<p class="muted">${k.noPeople}</p>` : ''}
<table>${head([k.name, k.position, k.roles, k.identity, k.nationality, k.ownership])}<tbody>
${a.people.map(
  (p) => html`<tr data-person="${p.id}"><td>${p.full_name}</td><td>${p.position}</td><td>${p.roles.join(', ')}</td>
<td>${p.id_type === 'nik' ? k.nik : k.passport} <span class="last4">${last4(t, p.id_number_last4)}</span></td><td>${p.nationality}</td><td>${p.ownership_pct === null ? '' : `${p.ownership_pct}%`}</td></tr>`,
)}
</tbody></table></section>
<section class="card" id="bank"><h2>${k.bankAccount}</h2><dl>
${entry(c.bank, a.bank_name)}${entry(k.holder, a.bank_account_holder)}${entry(c.accountNumber, html`<span class="last4">${last4(t, a.bank_account_last4)}</span>`)}
</dl></section>
<section class="card" id="documents"><h2>${c.documents}</h2>
${v.documents.length === 0 ? html`<p class="muted">${k.noDocuments}</p>` : html`<p class="muted">${k.linksUntil(iso(linksUntil))}</p>`}
<table>${head([k.document, k.file, k.added, ''])}<tbody>
${v.documents.map(
  (d) => html`<tr data-doc="${d.id}"><td>${docLabel(d)}</td>
<td>${d.mime}, ${kib(d.size)}<br><span class="muted">sha256 ${d.sha256.slice(0, 16)}…</span></td><td>${iso(d.created_at)}</td>
<td><a href="${localPath(d.url)}" target="_blank" rel="noopener" class="doc-link">${c.open}</a></td></tr>`,
)}
</tbody></table></section>
${
  earlier.length === 0
    ? ''
    : html`<section class="card" id="change-requests"><h2>${k.earlierChanges}</h2>
${earlier.map(
  (h) => html`<h3>${c.versionN(h.version)} <span class="muted">${iso(h.decided_at)}</span></h3><ul>${h.change_requests.map((r) => html`<li><strong>${r.field}</strong>: ${r.note}</li>`)}</ul>`,
)}</section>`
}
<section class="card" id="history"><h2>${k.history}</h2>
<table>${head([c.version, c.status, c.submitted, c.decided, k.tierOrReason])}<tbody>
${v.history.map(
  (h) => html`<tr data-version="${h.version}"><td>${h.id === a.id ? html`<strong>v${h.version}</strong> ${k.thisPage}` : html`<a href="/admin/kyb/${h.id}">v${h.version}</a>`}</td>
<td>${h.status}</td><td>${iso(h.submitted_at)}</td><td>${iso(h.decided_at)}</td><td>${h.risk_tier_assigned ?? ''}${h.decision_reason ? html`<span class="muted">${h.decision_reason}</span>` : ''}</td></tr>`,
)}
</tbody></table></section>
${kybDecisions(t, v, csrf)}`;
}

// ---- Enterprise deals (decision 0018): live funding to confirm, one deal, the fee override ---

/** An amount in the deal's currency (whole units): rupiah for IDR. */
const money = (amount: number, currency: string) => (currency === 'IDR' ? rupiah(amount) : `${currency} ${Math.trunc(amount).toLocaleString('id-ID')}`);

/** The live milestone's funding confirmation (the amount to expect named in its confirm text). `back`: a record page to return to. */
function fundingForm(t: ConsoleText, r: { milestone_id: string; funding_amount: number; currency: string; sequence_no: number; reference: string }, csrf: string, back: string | null = null): Html {
  const f = t.funding;
  return html`<form method="post" action="/admin/funding/${r.milestone_id}/confirm" class="confirm-funding" data-confirm="${f.confirmArrived(money(r.funding_amount, r.currency), r.sequence_no, r.reference)}">${csrfField(csrf)}${back ? backField(back) : ''}<input type="text" name="note" placeholder="${f.notePlaceholder}" maxlength="2000"><button type="submit">${t.c.confirm}</button></form>`;
}

/** A disputed milestone's ruling: release, refund, or split with the amount kept for the counterparty (more than its fee share, less than what is held). */
function rulingForm(
  t: ConsoleText,
  r: { milestone_id: string; amount: number; refunded_amount: number; seller_fee: number; currency: string; sequence_no: number; reference: string },
  csrf: string,
  back: string | null = null,
): Html {
  const c = t.c;
  const x = t.rulings;
  const held = r.amount - r.refunded_amount;
  return html`<form method="post" action="/admin/rulings/${r.milestone_id}/resolve" class="rule" data-confirm="${x.confirmRuling(r.sequence_no, r.reference)}">${csrfField(csrf)}${back ? backField(back) : ''}
<select name="outcome" required aria-label="${c.ruling}"><option value="release">${x.release}</option><option value="refund">${x.refund}</option><option value="split">${x.split}</option></select>
<label>${x.releaseAmount(money(r.seller_fee + 1, r.currency), money(held - 1, r.currency))} <input type="number" name="release_amount" min="${r.seller_fee + 1}" max="${held - 1}" step="1" inputmode="numeric"></label>
<input type="text" name="note" placeholder="${c.noteWhy}" maxlength="2000">
<button type="submit">${c.rule}</button></form>`;
}

/** An open payout settled by hand (once the transfer has left). */
function settleForm(t: ConsoleText, d: PayoutListRow, csrf: string, back: string | null = null): Html {
  const x = t.payouts;
  return html`<form method="post" action="/admin/payouts/${d.id}/settle" class="settle" data-confirm="${x.confirmSettle(money(d.amount, d.currency), payoutDestination(d))}">${csrfField(csrf)}${back ? backField(back) : ''}<input type="text" name="note" placeholder="${x.settleNote}" maxlength="2000"><button type="submit">${x.settle}</button></form>`;
}

/** An open payout failed with the reason the workspace sees (its money returns to the milestone). */
function failForm(t: ConsoleText, d: PayoutListRow, csrf: string, back: string | null = null): Html {
  const x = t.payouts;
  return html`<form method="post" action="/admin/payouts/${d.id}/fail" class="fail" data-confirm="${x.confirmFail(money(d.amount, d.currency))}">${csrfField(csrf)}${back ? backField(back) : ''}<input type="text" name="reason" placeholder="${x.failReason}" maxlength="1000" required><input type="text" name="note" placeholder="${t.c.note}" maxlength="2000"><button type="submit" class="danger">${x.fail}</button></form>`;
}

export function fundingTable(t: ConsoleText, page: QueuePage<AwaitingRow>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const f = t.funding;
  return html`<section class="card"><h1>${f.heading}</h1>
<p class="muted">${f.intro}</p>
${queueFilterForm(t, '/admin/funding', 'funding-filters', filters, f.placeholder)}
${rows.length === 0 ? html`<p id="none">${f.nothing}</p>` : ''}
<table id="funding">${head([c.activated, c.workspace, c.deal, c.milestone, c.amount, c.buyerFee, f.expect, c.currency, c.confirm])}<tbody>
${rows.map(
  (r) => html`<tr data-id="${r.milestone_id}" data-deal="${r.deal_id}">
<td>${iso(r.activated_at)}</td><td>${workspaceLink(r.workspace_id, r.workspace_name)}</td>
<td><a href="/admin/deals/${r.deal_id}" class="open">${r.reference}</a><br><span class="muted">${r.title}</span></td>
<td>${r.sequence_no}. ${r.milestone_title}</td>
<td>${money(r.amount, r.currency)}</td><td>${money(r.buyer_fee, r.currency)}</td><td class="expect"><strong>${money(r.funding_amount, r.currency)}</strong></td><td>${r.currency}</td>
<td>${fundingForm(t, r, csrf)}</td>
</tr>`,
)}
</tbody></table>${nextPageLink(t, withFilters('/admin/funding', filters), page.next)}</section>`;
}

function feeOverrideForm(t: ConsoleText, v: StaffDeal, csrf: string): Html {
  const d = v.deal;
  const x = t.deal;
  if (v.status === 'cancelled') {
    return html`<section class="card" id="fee-override"><h2>${x.override}</h2><p id="no-override">${x.cancelledNoOverride}</p></section>`;
  }
  return html`<section class="card" id="fee-override"><h2>${x.override}</h2>
<p class="muted">${x.overrideIntro}</p>
<form method="post" action="/admin/deals/${d.id}/fee-allocation" id="override" data-confirm="${x.confirmOverride(d.reference)}">${csrfField(csrf)}
<label>${x.allocationLabel} <select name="fee_allocation" required>${ALLOCATIONS.map((a) => html`<option value="${a}" ${a === d.fee_allocation ? html`selected` : ''}>${x.allocation[a]}</option>`)}</select></label>
<label>${x.sharePercent} <input type="number" name="fee_buyer_percent" min="0" max="100" step="1" inputmode="numeric"></label>
<label>${t.c.reason} <input type="text" name="reason" minlength="2" maxlength="2000" required></label>
<input type="text" name="note" placeholder="${t.c.auditNote}" maxlength="2000">
<button type="submit">${x.overrideButton}</button></form></section>`;
}

/** Where a payout went: the destination kept on it at release (issue 42), never its instruction's current one. */
const payoutDestination = (d: PayoutListRow) => `${d.destination_bank_name} ${maskAccountNumber(d.destination_account_last4)}`;

function dealPayouts(t: ConsoleText, rows: PayoutListRow[], csrf: string, back: string): Html {
  const c = t.c;
  return html`<section class="card" id="deal-payouts"><h2>${c.payouts}</h2>
<p class="muted">${t.deal.payoutsIntro}</p>
${rows.length === 0 ? html`<p class="muted">${t.deal.noPayouts}</p>` : ''}
<table>${head([c.queued, c.milestone, c.destination, c.amount, c.status, t.orders.move])}<tbody>
${rows.map(
  (d) => html`<tr data-id="${d.id}" data-status="${d.status}">
<td>${iso(d.created_at)}</td><td>${d.milestone_sequence_no}. ${d.milestone_title}</td>
<td class="destination">${d.instruction_label}<br><span class="account">${payoutDestination(d)}</span><br><span class="muted holder">${d.destination_account_holder}</span></td>
<td class="amount">${money(d.amount, d.currency)}</td><td class="status">${d.status}${d.settled_at ? html`<br><span class="muted">${t.deal.settledAt(iso(d.settled_at))}</span>` : ''}${d.failure_reason ? html`<br><span class="muted">${d.failure_reason}</span>` : ''}</td>
<td>${d.status === 'queued' || d.status === 'processing' ? html`${settleForm(t, d, csrf, back)}${failForm(t, d, csrf, back)}` : ''}</td>
</tr>`,
)}
</tbody></table></section>`;
}

/** Each milestone's approval slots: round, slot, who decided and when, with their note. */
function dealApprovals(t: ConsoleText, v: StaffDeal): Html {
  const rows = v.milestones.flatMap((ms) => (v.extras.approvals.get(ms.id) ?? []).map((a) => ({ ms, a })));
  const c = t.c;
  return html`<section class="card" id="approvals"><h2>${t.deal.approvals}</h2>
${
  rows.length === 0
    ? html`<p class="muted">${t.deal.noApprovals}</p>`
    : html`<table>${head([c.milestone, t.deal.round, t.deal.slot, c.status, t.deal.approver, c.decided, c.note])}<tbody>
${rows.map(({ ms, a }) => html`<tr data-id="${a.id}"><td>${ms.sequence_no}. ${ms.title}</td><td>${a.round}</td><td>${a.slot}</td><td class="status">${a.status}</td><td>${a.approver_name ?? ''}</td><td>${iso(a.decided_at)}</td><td>${a.note ?? ''}</td></tr>`)}
</tbody></table>`
}</section>`;
}

/** The documents filed on the deal's milestones: type, title, who filed it, who may see it. */
function dealDocuments(t: ConsoleText, v: StaffDeal): Html {
  const rows = v.milestones.flatMap((ms) => (v.extras.documents.get(ms.id) ?? []).map((d) => ({ ms, d })));
  const c = t.c;
  return html`<section class="card" id="documents"><h2>${c.documents}</h2>
${
  rows.length === 0
    ? html`<p class="muted">${t.deal.noDocuments}</p>`
    : html`<table>${head([c.milestone, t.deal.type, c.title, t.deal.filedBy, t.deal.filed, t.deal.visibleTo, 'SHA-256'])}<tbody>
${rows.map(({ ms, d }) => html`<tr data-id="${d.id}"><td>${ms.sequence_no}. ${ms.title}</td><td>${d.document_type}</td><td>${d.title}</td><td>${d.uploaded_by_name}</td><td>${iso(d.created_at)}</td><td>${d.visibility}</td><td class="muted">${d.checksum_sha256 ? d.checksum_sha256.slice(0, 12) : ''}</td></tr>`)}
</tbody></table>`
}</section>`;
}

export function dealPage(t: ConsoleText, v: StaffDeal, csrf: string, payouts: PayoutListRow[] = []): Html {
  const d = v.deal;
  const w = v.workspace;
  const c = t.c;
  const x = t.deal;
  const fee = serializeFee(d, v.milestones);
  const m = (amount: number) => money(amount, d.currency);
  const back = `/admin/deals/${d.id}`;
  return html`<section class="card" id="deal" data-id="${d.id}" data-status="${v.status}">
<p><a href="/admin/funding">${t.funding.heading}</a></p>
<h1>${x.heading(d.reference, d.title)}</h1>
<dl>
${entry(c.workspace, html`${workspaceLink(w.id, w.display_name)} <span class="muted">${w.legal_name} · ${w.is_sandbox ? c.sandbox : c.live}</span>`)}
${entry(c.counterparty, html`${d.counterparty_name} <span class="muted">${d.counterparty_country_code} · ${t.kyb.kybStatus(d.counterparty_kyb_status)} · ${d.counterparty_relationship}</span>`)}
${entry(c.status, html`<strong id="deal-status">${v.status}</strong>${d.is_test ? html` <span class="muted">${x.sandboxDeal}</span>` : ''}`)}
${entry(c.currency, d.currency)}
${entry(x.owner, d.owner_name)}
${entry(c.created, iso(d.created_at))}
${d.activated_at ? entry(c.activated, iso(d.activated_at)) : ''}
${d.cancelled_at ? entry(c.cancelled, iso(d.cancelled_at)) : ''}
</dl></section>
<section class="card" id="fee"><h2>${c.fee}</h2><dl>
${entry(x.rate, html`${fee.rate_percent}%${d.currency === 'IDR' ? html` <span class="muted">${x.minimum(rupiah(fee.min_fee))}</span>` : ''}${fee.tier ? html` <span class="muted">${x.volumeTier(rupiah(fee.tier.min_volume))}</span>` : ''}`)}
${entry(x.platformFee, html`<span id="platform-fee">${m(fee.platform_fee)}</span>`)}
${entry(x.allocationLabel, html`<strong id="fee-allocation">${fee.allocation}</strong> <span id="fee-percents">${x.shares(fee.buyer_percent, fee.seller_percent)}</span>`)}
${entry(x.buyerFeeWorkspace, html`<span id="buyer-fee">${m(fee.buyer_fee)}</span>`)}
${entry(x.sellerFeeCounterparty, html`<span id="seller-fee">${m(fee.seller_fee)}</span>`)}
${entry(x.fundingTotal, m(fee.funding_total))}
${entry(x.payoutTotal, m(fee.payout_total))}
${entry(x.frozen, fee.frozen ? x.frozenYes : x.frozenNo)}
</dl></section>
<section class="card" id="milestones"><h2>${x.milestones}</h2>
<table>${head([x.number, c.title, c.status, c.amount, c.buyerFee, c.sellerFee, x.fundingAmount, x.payoutAmount, x.sharesHead, x.funded, t.orders.move])}<tbody>
${v.milestones.map((ms) => {
  // The staff moves a milestone's state calls for, made here (issue 46): live funding to confirm, a dispute to rule.
  const keyed = { milestone_id: ms.id, amount: ms.amount, refunded_amount: ms.refunded_amount, seller_fee: ms.seller_fee, funding_amount: ms.funding_amount, currency: d.currency, sequence_no: ms.sequence_no, reference: d.reference };
  const moveHere = ms.status === 'awaiting_funding' && !d.is_test ? fundingForm(t, keyed, csrf, back) : ms.status === 'disputed' ? rulingForm(t, keyed, csrf, back) : '';
  return html`<tr data-id="${ms.id}" data-status="${ms.status}">
<td>${ms.sequence_no}</td><td>${ms.title}</td><td class="status">${ms.status}</td>
<td>${m(ms.amount)}</td><td class="buyer-fee">${m(ms.buyer_fee)}</td><td class="seller-fee">${m(ms.seller_fee)}</td><td>${m(ms.funding_amount)}</td><td>${m(ms.payout_amount)}</td>
<td>${feeSharesOpen(ms.status) ? x.sharesOpen : x.sharesFixed}</td><td>${iso(ms.funded_at)}${ms.funding_method ? html`<br><span class="muted">${ms.funding_method}</span>` : ''}</td>
<td>${moveHere}</td>
</tr>`;
})}
</tbody></table></section>
${dealApprovals(t, v)}
${dealDocuments(t, v)}
${dealPayouts(t, payouts, csrf, back)}
${feeOverrideForm(t, v, csrf)}
<section class="card" id="events"><h2>${c.recentEvents}</h2>
${v.events.length === 0 ? html`<p class="muted">${x.noEvents}</p>` : ''}
<table>${head([c.when, c.event, c.by, c.summary])}<tbody>
${v.events.map((e) => html`<tr data-event="${e.event}"><td>${iso(e.created_at)}</td><td>${e.event}</td><td>${e.actor_label ?? e.actor_name ?? ''}</td><td>${e.summary}</td></tr>`)}
</tbody></table></section>`;
}

// ---- Payouts and rulings (decision 0019, issue 27) -----------------------------------------

const sandboxMark = (t: ConsoleText, isTest: boolean) => (isTest ? html`<br><span class="muted sandbox">${t.c.sandboxNoMoney}</span>` : '');

/** The link to a staff queue's next page (review R4: every item reachable); nothing on the last page. */
export function nextPageLink(t: ConsoleText, path: string, next: string | null): Html | '' {
  return next === null ? '' : html`<p><a id="next-page" href="${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(next)}">${t.c.nextPage}</a></p>`;
}

export function instructionsTable(t: ConsoleText, page: QueuePage<PendingInstruction>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const x = t.instructions;
  return html`<section class="card"><h1>${x.heading}</h1>
<p class="muted">${x.intro(QUEUE_PAGE)}</p>
${queueFilterForm(t, '/admin/instructions', 'instruction-filters', filters, x.placeholder)}
${rows.length === 0 ? html`<p id="none">${x.nothing}</p>` : ''}
<table id="instructions">${head([x.pendingSince, c.workspace, c.counterparty, c.label, c.bank, c.accountHolder, c.accountNumber, c.revealAndVerify, c.decline])}<tbody>
${rows.map(
  (p) => html`<tr data-id="${p.id}" data-sandbox="${p.workspace_is_sandbox ? 'true' : 'false'}">
<td>${iso(p.pending_since)}</td><td>${workspaceLink(p.workspace_id, p.workspace_name)}${sandboxMark(t, p.workspace_is_sandbox)}</td><td>${p.counterparty_name}</td><td>${p.label}</td>
<td>${p.bank_name}</td><td>${p.account_holder}</td><td class="account">${maskAccountNumber(p.account_number_last4)}</td>
<td><form method="post" action="/admin/instructions/${p.id}/reveal" class="reveal">${csrfField(csrf)}<input type="text" name="note" placeholder="${c.whyOptional}" maxlength="2000"><button type="submit">${c.reveal}</button></form></td>
<td><form method="post" action="/admin/instructions/${p.id}/decline" class="decline" data-confirm="${x.confirmDecline(p.label, p.bank_name)}">${csrfField(csrf)}<input type="hidden" name="destination_version" value="${String(p.destination_version)}"><input type="text" name="reason" placeholder="${x.reasonPlaceholder}" maxlength="1000" required><button type="submit">${c.decline}</button></form></td>
</tr>`,
)}
</tbody></table>
${nextPageLink(t, withFilters('/admin/instructions', filters), page.next)}</section>`;
}

/**
 * One instruction revealed (issue 42): the full account number, what a verification signs
 * (live or sandbox money), and the verify form naming the `destination_version` shown here.
 * Answered to a POST (the reveal is audited), never cached.
 */
export function revealedInstruction(t: ConsoleText, p: InstructionForStaff, accountNumber: string, csrf: string): Html {
  const canVerify = p.status === 'pending_verification';
  const c = t.c;
  const x = t.reveal;
  return html`<section class="card" id="revealed" data-id="${p.id}" data-version="${String(p.destination_version)}">
<p><a href="/admin/instructions">${x.back}</a></p>
<h1>${x.heading(p.label)}</h1>
<p class="muted">${x.recorded}</p>
<dl>
${entry(c.workspace, html`${workspaceLink(p.workspace_id, p.workspace_name)} <span class="muted">${p.workspace_is_sandbox ? x.sandboxSigns : x.liveSigns}</span>`)}
${entry(c.counterparty, p.counterparty_name)}
${entry(c.label, html`<span id="label">${p.label}</span>`)}
${entry(c.bank, html`<span id="bank">${p.bank_name}</span>`)}
${entry(c.accountHolder, html`<span id="holder">${p.account_holder}</span>`)}
${entry(c.accountNumber, html`<strong id="account-number" class="account">${accountNumber}</strong>`)}
${entry(c.status, html`<span id="status">${p.status}</span>`)}
${entry(c.version, html`<span id="version">${String(p.destination_version)}</span>`)}
</dl>
${
  canVerify
    ? html`<form method="post" action="/admin/instructions/${p.id}/verify" id="verify" data-confirm="${x.confirmVerify(p.bank_name, accountNumber, p.account_holder, p.counterparty_name)}">${csrfField(csrf)}<input type="hidden" name="destination_version" value="${String(p.destination_version)}"><input type="text" name="note" placeholder="${x.notePlaceholder}" maxlength="2000"><button type="submit">${x.verify}</button></form>`
    : html`<p class="muted" id="no-verify">${p.status === 'declined' ? x.declined : x.alreadyVerified}</p>`
}
</section>`;
}

/** An open payout as the console lists it (shared/payouts/staff.ts `openPayouts`). */
export type OpenPayout = PayoutListRow & { workspace_name: string };

export function payoutsTable(t: ConsoleText, page: QueuePage<OpenPayout>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const x = t.payouts;
  return html`<section class="card"><h1>${x.heading}</h1>
<p class="muted">${x.intro}</p>
${queueFilterForm(t, '/admin/payouts', 'payout-filters', filters, x.placeholder, statusSelect(t, filters, OPEN_PAYOUT_STATUSES.map((s) => [s, s] as const)))}
${rows.length === 0 ? html`<p id="none">${x.nothing}</p>` : ''}
<table id="payouts">${head([c.queued, c.workspace, c.deal, c.destination, c.amount, c.status, x.settle, x.fail])}<tbody>
${rows.map((d) => {
  const amount = money(d.amount, d.currency);
  const destination = payoutDestination(d);
  return html`<tr data-id="${d.id}" data-deal="${d.deal_id}">
<td>${iso(d.created_at)}</td><td>${workspaceLink(d.workspace_id, d.workspace_name)}${sandboxMark(t, d.is_test)}</td>
<td><a href="/admin/deals/${d.deal_id}" class="open">${d.deal_reference}</a><br><span class="muted">${d.milestone_sequence_no}. ${d.milestone_title}</span></td>
<td>${d.instruction_label}<br><span class="account">${destination}</span><br><span class="muted">${d.destination_account_holder} · ${d.counterparty_name}</span>
<form method="post" action="/admin/instructions/${d.payout_instruction_id}/reveal" class="reveal">${csrfField(csrf)}<input type="hidden" name="note" value="To pay payout ${d.id} by hand"><button type="submit">${x.revealAccount}</button></form></td>
<td class="amount"><strong>${amount}</strong></td>
<td class="status">${d.status}${d.status === 'processing' && d.lease_until ? html`<br><span class="muted">${x.claimedUntil(iso(d.lease_until))}</span>` : ''}${d.attempts > 0 ? html`<br><span class="muted">${x.attempts(d.attempts)}</span>` : ''}</td>
<td>${settleForm(t, d, csrf)}</td>
<td>${failForm(t, d, csrf)}</td>
</tr>`;
})}
</tbody></table>${nextPageLink(t, withFilters('/admin/payouts', filters), page.next)}</section>`;
}

export function rulingsTable(t: ConsoleText, page: QueuePage<DisputedRow>, csrf: string, filters: QueueFilters): Html {
  const rows = page.rows;
  const c = t.c;
  const x = t.rulings;
  return html`<section class="card"><h1>${x.heading}</h1>
<p class="muted">${x.intro}</p>
${queueFilterForm(t, '/admin/rulings', 'ruling-filters', filters, x.placeholder)}
${rows.length === 0 ? html`<p id="none">${c.nothingToRule}</p>` : ''}
<table id="rulings">${head([x.disputed, c.workspace, c.deal, c.milestone, c.amount, c.sellerFee, c.reason, c.ruling])}<tbody>
${rows.map((r) => {
  const held = r.amount - r.refunded_amount;
  return html`<tr data-id="${r.milestone_id}" data-deal="${r.deal_id}">
<td>${iso(r.disputed_at)}</td><td>${workspaceLink(r.workspace_id, r.workspace_name)}${sandboxMark(t, r.is_test)}</td>
<td><a href="/admin/deals/${r.deal_id}" class="open">${r.reference}</a><br><span class="muted">${r.title}</span></td>
<td>${r.sequence_no}. ${r.milestone_title}</td>
<td class="amount">${money(r.amount, r.currency)}${r.refunded_amount > 0 ? html`<br><span class="muted held">${x.held(money(held, r.currency), money(r.refunded_amount, r.currency))}</span>` : ''}</td><td class="seller-fee">${money(r.seller_fee, r.currency)}</td><td class="reason">${r.dispute_reason ?? ''}</td>
<td>${rulingForm(t, r, csrf)}</td>
</tr>`;
})}
</tbody></table>${nextPageLink(t, withFilters('/admin/rulings', filters), page.next)}</section>`;
}

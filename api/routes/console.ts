/**
 * The operator console under /admin (an admin session only; decision D2). Plain
 * server-rendered pages; every move goes through the same service as its /v1/admin route
 * (which records the staff action), and every form is CSRF-checked with the session's
 * synchronizer token. Bull Board stays at /admin/queues (admin-queues.ts). The KYB queue
 * (/admin/kyb) opens each application with its documents (links signed for the staff
 * member) and takes the review's three decisions (decision 0017). Enterprise deals (decision
 * 0018): /admin/funding lists live milestones awaiting funding and confirms them; a deal's
 * page (/admin/deals/:id) shows its fee and milestones and takes the fee-split override.
 * Payouts and rulings (decision 0019, issue 27): /admin/instructions verifies payout
 * instructions, /admin/payouts settles or fails open payouts by hand, /admin/rulings rules
 * disputed deal milestones (release, refund or split). The console speaks English unless the
 * staff member chose Indonesian (/admin/language/:lang sets the `console_lang` cookie); every
 * template is given the chosen language's dictionary (api/pages/console-text.ts).
 */
import type { StaffActor } from '../../shared/actors.js';
import { authErrors } from '../../shared/auth/errors.js';
import * as authService from '../../shared/auth/service.js';
import { ATTENTION_REASONS, attentionPayments, consoleCounts, disputesToResolve, findUsers, instructionsToVerify, ORDERS_TO_MOVE, ordersToMove } from '../../shared/checkout/console.js';
import { consoleErrors } from '../../shared/checkout/errors.js';
import { clock } from '../../shared/clock.js';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { AppError, errors, type FlatDetails } from '../../shared/errors.js';
import { ALLOCATIONS, type Allocation } from '../../shared/deals/fees.js';
import * as rulings from '../../shared/deals/rulings.js';
import * as dealStaff from '../../shared/deals/staff.js';
import * as kybReview from '../../shared/kyb/review.js';
import { serializeQueueItem } from '../../shared/kyb/serialize.js';
import { RISK_TIERS, type RiskTier } from '../../shared/kyb/states.js';
import * as orders from '../../shared/orders/service.js';
import { OUTCOMES, resolveDispute, type Outcome } from '../../shared/disputes/service.js';
import type { StaffQueueFilter } from '../../shared/disputes/repo.js';
import { staffConfirm, staffCredit, staffMarkReturned, staffReject } from '../../shared/payments/manual.js';
import { DECLINE_REASON } from '../../shared/payouts/instruction-schemas.js';
import { declineInstruction, revealInstruction, verifyInstruction } from '../../shared/payouts/instructions.js';
import { payoutsOfDeal } from '../../shared/payouts/console-repo.js';
import type { QueueCursor, QueuePage, StaffSearch } from '../../shared/staff/queue.js';
import * as records from '../../shared/staff/records.js';
import * as payoutStaff from '../../shared/payouts/staff.js';
import { reactivateUser, suspendUser } from '../../shared/users/service.js';
import * as withdrawals from '../../shared/withdrawals/service.js';
import { createRouter, type Ctx } from '../context.js';
import { staffOf } from '../kit.js';
import { clearSessionCookie } from '../middleware/auth.js';
import * as T from '../pages/console.js';
import * as R from '../pages/console-records.js';
import { consoleText, type ConsoleText } from '../pages/console-text.js';
import { assertCsrf, formOf, html, page, pageSession, redirect, safeNext, sendPage, type Html, type Lang, type PageSession } from '../pages/html.js';

export const consoleRouter = createRouter();

/** The admin behind the cookie; anyone else is sent to sign in (anonymous) or refused (403). */
async function staffSession(ctx: Ctx): Promise<PageSession | null> {
  const session = await pageSession(ctx);
  if (!session) {
    // The page asked for, with its query, when it is one a sign-in may send back to (a deep
    // link survives sign-in); a form's post leads back to the console's front page.
    const next = (ctx.method === 'GET' ? safeNext(ctx.url) : null) ?? '/admin';
    redirect(ctx, `/sign-in?next=${encodeURIComponent(next)}`);
    return null;
  }
  if (session.role !== 'admin') throw authErrors.staffOnly();
  return session;
}

// ---- The console's language: English unless the staff member chose Indonesian --------------

/** The cookie keeping a staff member's choice (`id` or `en`), sent to the console's pages only. */
const LANG_COOKIE = 'console_lang';
const LANG_COOKIE_AGE_MS = 365 * 24 * 3_600_000;

function consoleLang(ctx: Ctx): Lang {
  return ctx.cookies.get(LANG_COOKIE) === 'id' ? 'id' : 'en';
}

/** The dictionary of this request's console language. */
const staffText = (ctx: Ctx): ConsoleText => consoleText(consoleLang(ctx));

/**
 * Switches the console's language and goes back to `next` (the page the switch was made on):
 * only a page safeNext admits under /admin; anything else (another site, the checkout, a
 * malformed path) leads to /admin.
 */
consoleRouter.get(
  '/admin/language/:lang',
  page(async (ctx) => {
    const lang = ctx.params.lang;
    if (lang !== 'id' && lang !== 'en') throw errors.notFound();
    const session = await staffSession(ctx);
    if (!session) return;
    // As the session cookie: Secure when the configuration says TLS is in front (Koa cannot see it).
    if (config.sessionCookieSecure) ctx.cookies.secure = true;
    ctx.cookies.set(LANG_COOKIE, lang, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/admin',
      maxAge: LANG_COOKIE_AGE_MS,
      secure: config.sessionCookieSecure,
      overwrite: true,
    });
    const back = safeNext(ctx.query.next);
    redirect(ctx, back?.startsWith('/admin') ? back : '/admin');
  }),
);

function consolePage(ctx: Ctx, section: T.ConsoleSection, session: PageSession, body: Html): void {
  const lang = consoleLang(ctx);
  const t = consoleText(lang);
  // Where the language switch returns: this page, or its section's list for a page answering a POST (the reveal).
  const here = ctx.method === 'GET' ? ctx.url : T.SECTION_PATH[section];
  sendPage(ctx, 200, {
    title: t.title(t.nav[section]),
    lang,
    wide: true,
    scripts: ['console.js'],
    body: html`${T.consoleNav(t, section, session.displayName, session.csrfToken, here)}${T.flash(t, ctx.query.done)}${body}`,
  });
}

const noteOf = (form: URLSearchParams): string | null => {
  const note = (form.get('note') ?? '').trim();
  if (note.length > 2000) throw consoleErrors.noteTooLong();
  return note === '' ? null : note;
};

/** The staff member making a console move (the session's admin, set by pageSession) with the form's note. */
const staffWith = (ctx: Ctx, note: string | null): StaffActor => ({ ...staffOf(ctx), note });

/**
 * A refusal as the operator reads it: an INVALID_BODY from a service (a rule on a field the
 * form cannot check, e.g. a split's release_amount against the milestone) names the field
 * and its rule after the message, since the page shows only the message.
 */
function explained(err: unknown): unknown {
  if (!(err instanceof AppError)) return err;
  const details = err.extras.details as FlatDetails | undefined;
  const rules = Object.entries(details?.fieldErrors ?? {}).flatMap(([field, messages]) => messages.map((m) => `${field} ${m}`));
  if (rules.length === 0) return err;
  const text = `${err.message}: ${rules.join('; ')}`;
  return new AppError(err.kind, err.code, { en: text, id: text }, { extras: err.extras, headers: err.headers });
}

/** A console move: admin session, CSRF token, the service call, then back to the list (or the page `back` names). */
/** A staff queue page's `?cursor=` (review R4; shared/staff/queue.ts checks it): none for the first page. */
function cursorOf(ctx: Ctx): string | null {
  const c = ctx.query.cursor;
  return typeof c === 'string' && c !== '' ? c : null;
}

const MAX_WAIT_HOURS = 24 * 366;

const queryText = (ctx: Ctx, name: string): string => {
  const v = ctx.query[name];
  return typeof v === 'string' ? v.trim() : '';
};

/**
 * A queue's search, waiting and status filters from its query (issue 46): `q` a search (at
 * most 200 characters), `older_than_hours` only items waiting at least that long (a whole
 * number, 1 to 8784), `status` `all` (the default) or one of `statuses` when the queue has a
 * status filter. Anything else is 400 INVALID_QUERY, shown on the page.
 */
function queueFilters<S extends string>(ctx: Ctx, statuses: readonly S[] = []): { shown: T.QueueFilters; search: StaffSearch; status: S | null } {
  const statusText = queryText(ctx, 'status') || 'all';
  const status = statuses.find((s) => s === statusText) ?? null;
  if (status === null && statusText !== 'all') {
    const allowed = ['all', ...statuses].join(', ');
    throw consoleErrors.invalidFilter(`status must be one of ${allowed}`, `status harus salah satu dari ${allowed}`);
  }
  const q = queryText(ctx, 'q');
  if (q.length > 200) throw consoleErrors.invalidFilter('q may be at most 200 characters', 'q paling banyak 200 karakter');
  const hoursText = queryText(ctx, 'older_than_hours');
  const hours = hoursText === '' ? null : Number(hoursText);
  if (hours !== null && (!Number.isInteger(hours) || hours < 1 || hours > MAX_WAIT_HOURS)) {
    throw consoleErrors.invalidFilter(`older_than_hours must be a whole number from 1 to ${MAX_WAIT_HOURS}`, `older_than_hours harus bilangan bulat 1 sampai ${MAX_WAIT_HOURS}`);
  }
  return {
    shown: { q, olderThanHours: hours, status: status ?? 'all' },
    search: { q: q === '' ? null : q, before: hours === null ? null : new Date(clock.now().getTime() - hours * 3_600_000) },
    status,
  };
}

/** The dispute queue's filters: the queue's own, and `status` all (open and on hold, the default), open or on_hold. */
function disputeFilters(ctx: Ctx): { filter: StaffQueueFilter; shown: T.DisputeFilters } {
  const f = queueFilters(ctx, ['open', 'on_hold'] as const);
  return { filter: { statuses: f.status === null ? ['open', 'on_hold'] : [f.status], ...f.search }, shown: f.shown };
}

/**
 * A queue's page (issue 46): the admin session, the search and waiting filters and the
 * cursor of its query (400 INVALID_QUERY when out of range), one page of `read`, drawn by
 * `render` with the filters shown back.
 */
function queueRoute<R, S extends string = never>(
  path: string,
  section: T.ConsoleSection,
  read: (page: QueueCursor, by: StaffSearch, status: S | null) => Promise<QueuePage<R>>,
  render: (t: ConsoleText, page: QueuePage<R>, csrf: string, shown: T.QueueFilters) => Html,
  statuses: readonly S[] = [],
): void {
  consoleRouter.get(
    path,
    page(async (ctx) => {
      const session = await staffSession(ctx);
      if (!session) return;
      const f = queueFilters(ctx, statuses);
      consolePage(ctx, section, session, render(staffText(ctx), await read({ cursor: cursorOf(ctx) }, f.search, f.status), session.csrfToken, f.shown));
    }),
  );
}

/** A record page a move's form names in `back` (issue 46: the move returns where it was made); anything else is ignored. */
const RECORD_PAGE = /^\/admin\/(users|escrows|orders|workspaces|deals)\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function move(back: string | ((ctx: Ctx) => string), done: string, run: (ctx: Ctx, form: URLSearchParams) => Promise<unknown>) {
  return page(async (ctx) => {
    const form = await formOf(ctx);
    const session = await staffSession(ctx);
    if (!session) return;
    assertCsrf(form, session);
    try {
      await run(ctx, form);
    } catch (err) {
      throw explained(err);
    }
    const asked = form.get('back') ?? '';
    redirect(ctx, `${RECORD_PAGE.test(asked) ? asked : typeof back === 'string' ? back : back(ctx)}?done=${done}`);
  });
}

/** A record page (issue 46): the admin session, then `render` of what `read` finds for the id (404 NOT_FOUND for none). */
function recordRoute<R>(path: string, section: T.ConsoleSection, read: (id: string) => Promise<R>, render: (t: ConsoleText, record: R, csrf: string) => Html): void {
  consoleRouter.get(
    path,
    page(async (ctx) => {
      const session = await staffSession(ctx);
      if (session) consolePage(ctx, section, session, render(staffText(ctx), await read(ctx.params.id ?? ''), session.csrfToken));
    }),
  );
}

recordRoute('/admin/users/:id', 'users', records.userRecord, R.userPage);
recordRoute('/admin/escrows/:id', 'disputes', records.escrowRecord, R.escrowPage);
recordRoute('/admin/orders/:id', 'orders', records.orderRecord, R.orderPage);
recordRoute('/admin/workspaces/:id', 'kyb', records.workspaceRecord, R.workspacePage);

consoleRouter.get(
  '/admin',
  page(async (ctx) => {
    const session = await staffSession(ctx);
    if (session) consolePage(ctx, 'overview', session, T.overview(staffText(ctx), await consoleCounts()));
  }),
);

consoleRouter.get(
  '/admin/disputes',
  page(async (ctx) => {
    const session = await staffSession(ctx);
    if (!session) return;
    const filters = disputeFilters(ctx);
    const page = await disputesToResolve(filters.filter, { cursor: cursorOf(ctx) });
    consolePage(ctx, 'disputes', session, T.disputesTable(staffText(ctx), page, session.csrfToken, filters.shown));
  }),
);

consoleRouter.post(
  '/admin/disputes/:id/resolve',
  move('/admin/disputes', 'dispute.resolve', async (ctx, form) => {
    const outcome = form.get('outcome') ?? '';
    if (!(OUTCOMES as readonly string[]).includes(outcome)) throw consoleErrors.invalidOutcome();
    await resolveDispute(undefined, staffOf(ctx), ctx.params.id ?? '', { outcome: outcome as Outcome, note: noteOf(form) });
  }),
);

queueRoute('/admin/payments', 'payments', attentionPayments, T.paymentsTable, ATTENTION_REASONS);

// The staff payment moves of /v1/admin/payments, one form each. Mark-returned needs its
// note, as the admin API's schema does: say where the money went.
const PAYMENT_MOVES: { path: string; action: string; run: typeof staffConfirm; noteRequired?: boolean }[] = [
  { path: 'confirm', action: 'payment.confirm', run: staffConfirm },
  { path: 'reject', action: 'payment.reject', run: staffReject },
  { path: 'credit', action: 'payment.credit', run: staffCredit },
  { path: 'mark-returned', action: 'payment.mark_returned', run: staffMarkReturned, noteRequired: true },
];

for (const m of PAYMENT_MOVES) {
  consoleRouter.post(
    `/admin/payments/:id/${m.path}`,
    move('/admin/payments', m.action, async (ctx, form) => {
      const note = noteOf(form);
      if (m.noteRequired && note === null) throw consoleErrors.returnNoteRequired();
      await m.run(undefined, staffWith(ctx, note), ctx.params.id ?? '');
    }),
  );
}

queueRoute('/admin/withdrawals', 'withdrawals', (page, by) => withdrawals.staffQueue(by, page), T.withdrawalsTable);

consoleRouter.post(
  '/admin/withdrawals/:id/approve',
  move('/admin/withdrawals', 'withdrawal.approve', async (ctx, form) => {
    await withdrawals.approve(undefined, staffOf(ctx), ctx.params.id ?? '', { note: noteOf(form) });
  }),
);

consoleRouter.post(
  '/admin/withdrawals/:id/reject',
  move('/admin/withdrawals', 'withdrawal.reject', async (ctx, form) => {
    await withdrawals.reject(undefined, staffOf(ctx), ctx.params.id ?? '', { note: noteOf(form) });
  }),
);

queueRoute('/admin/orders', 'orders', (page, by, status) => ordersToMove(page, by, status === null ? ORDERS_TO_MOVE : [status]), T.ordersTable, ORDERS_TO_MOVE);

const textOf = (form: URLSearchParams, name: string, max: number): string | null => {
  const value = form.get(name) ?? '';
  if (value.length > max) throw consoleErrors.fieldTooLong(name, max);
  return value.trim() === '' ? null : value;
};

consoleRouter.post(
  '/admin/orders/:id/confirm-payment',
  move('/admin/orders', 'order.confirm_payment', async (ctx, form) => {
    await orders.confirmPayment(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '');
  }),
);

consoleRouter.post(
  '/admin/orders/:id/process',
  move('/admin/orders', 'order.process', async (ctx, form) => {
    await orders.startProcessing(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '');
  }),
);

consoleRouter.post(
  '/admin/orders/:id/deliver',
  move('/admin/orders', 'order.deliver', async (ctx, form) => {
    const credentials = textOf(form, 'credentials', 10_000);
    const deliveryNote = textOf(form, 'delivery_note', 3000);
    // As the admin API's schema: credentials or a delivery note.
    if (credentials === null && deliveryNote === null) throw consoleErrors.credentialsOrNote();
    await orders.deliver(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', { credentials, delivery_note: deliveryNote });
  }),
);

consoleRouter.post(
  '/admin/orders/:id/refund',
  move('/admin/orders', 'order.refund', async (ctx, form) => {
    await orders.refund(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', { reason: textOf(form, 'reason', 2000) });
  }),
);

// ---- KYB review (decision 0017): the queue, one application, its three decisions ------------

queueRoute(
  '/admin/kyb',
  'kyb',
  (page, by) => kybReview.reviewQueue(db, page, by),
  (t, queue, _csrf, shown) => T.kybQueueTable(t, queue.rows.map((r) => ({ ...serializeQueueItem(r), workspace_id: r.workspace_id })), queue.next, shown),
);

consoleRouter.get(
  '/admin/kyb/:id',
  page(async (ctx) => {
    const session = await staffSession(ctx);
    if (!session) return;
    const view = await kybReview.applicationForStaff(db, ctx.params.id ?? '', session.userId);
    consolePage(ctx, 'kyb', session, T.kybApplicationPage(staffText(ctx), view, session.csrfToken));
  }),
);

/** The change requests of the form: `change_field` / `change_note` pairs, blank rows skipped (as the admin API's schema: 1 to 50). */
function changeRequestsOf(form: URLSearchParams): { field: string; note: string }[] {
  const fields = form.getAll('change_field');
  const notes = form.getAll('change_note');
  const out: { field: string; note: string }[] = [];
  for (let i = 0; i < Math.max(fields.length, notes.length); i++) {
    const field = (fields[i] ?? '').trim();
    const note = (notes[i] ?? '').trim();
    if (field === '' && note === '') continue;
    if (field === '' || note === '') throw consoleErrors.changeRequestIncomplete(i + 1);
    if (field.length > 120) throw consoleErrors.fieldTooLong('change_field', 120);
    if (note.length > 1000) throw consoleErrors.fieldTooLong('change_note', 1000);
    out.push({ field, note });
  }
  if (out.length === 0) throw consoleErrors.changeRequestsRequired();
  if (out.length > 50) throw consoleErrors.tooManyChangeRequests(50);
  return out;
}

consoleRouter.post(
  '/admin/kyb/:id/request-changes',
  move('/admin/kyb', 'kyb.request_changes', async (ctx, form) => {
    await kybReview.requestChanges(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', changeRequestsOf(form));
  }),
);

consoleRouter.post(
  '/admin/kyb/:id/approve',
  move('/admin/kyb', 'kyb.approve', async (ctx, form) => {
    const tier = form.get('risk_tier') ?? '';
    if (!(RISK_TIERS as readonly string[]).includes(tier)) throw consoleErrors.invalidRiskTier();
    await kybReview.approve(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', tier as RiskTier);
  }),
);

consoleRouter.post(
  '/admin/kyb/:id/reject',
  move('/admin/kyb', 'kyb.reject', async (ctx, form) => {
    const reason = (form.get('reason') ?? '').trim();
    if (reason.length < 2) throw consoleErrors.reasonRequired();
    if (reason.length > 2000) throw consoleErrors.fieldTooLong('reason', 2000);
    await kybReview.reject(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', reason);
  }),
);

// ---- Enterprise deals (decision 0018): live funding to confirm, one deal, the fee override ----

queueRoute('/admin/funding', 'funding', (page, by) => dealStaff.awaitingConfirmation(db, page, by), T.fundingTable);

consoleRouter.post(
  '/admin/funding/:id/confirm',
  move('/admin/funding', 'milestone.confirm_funding', async (ctx, form) => {
    await dealStaff.confirmFunding(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '');
  }),
);

consoleRouter.get(
  '/admin/deals/:id',
  page(async (ctx) => {
    const session = await staffSession(ctx);
    if (!session) return;
    const deal = await dealStaff.dealForStaff(db, ctx.params.id ?? '');
    consolePage(ctx, 'funding', session, T.dealPage(staffText(ctx), deal, session.csrfToken, await payoutsOfDeal(db, deal.deal.id)));
  }),
);

/** The override form as the admin API's schema reads its body: an allocation and/or a whole percent 0 to 100, a reason of 2 to 2000 characters. */
function overrideOf(form: URLSearchParams): dealStaff.OverrideInput {
  const allocation = (form.get('fee_allocation') ?? '').trim();
  if (allocation !== '' && !(ALLOCATIONS as readonly string[]).includes(allocation)) throw consoleErrors.invalidAllocation();
  const percent = (form.get('fee_buyer_percent') ?? '').trim();
  if (percent !== '' && (!/^\d{1,3}$/.test(percent) || Number(percent) > 100)) throw consoleErrors.invalidBuyerPercent();
  if (allocation === '' && percent === '') throw consoleErrors.allocationRequired();
  const reason = (form.get('reason') ?? '').trim();
  if (reason.length < 2) throw consoleErrors.overrideReasonRequired();
  if (reason.length > 2000) throw consoleErrors.fieldTooLong('reason', 2000);
  return {
    ...(allocation === '' ? {} : { fee_allocation: allocation as Allocation }),
    ...(percent === '' ? {} : { fee_buyer_percent: Number(percent) }),
    reason,
  };
}

consoleRouter.post(
  '/admin/deals/:id/fee-allocation',
  move(
    (ctx) => `/admin/deals/${encodeURIComponent(ctx.params.id ?? '')}`,
    'deal.fee_allocation',
    async (ctx, form) => {
      await dealStaff.overrideFeeAllocation(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', overrideOf(form));
    },
  ),
);

// ---- Payouts and rulings (decision 0019, issue 27): instructions to verify, payouts to settle or fail, disputes to rule ----

queueRoute('/admin/instructions', 'instructions', instructionsToVerify, T.instructionsTable);

/** The reveal (issue 42): audited, answered as a page to this POST (never cached), with the verify form naming the version shown. */
consoleRouter.post(
  '/admin/instructions/:id/reveal',
  page(async (ctx) => {
    const form = await formOf(ctx);
    const session = await staffSession(ctx);
    if (!session) return;
    assertCsrf(form, session);
    const { instruction, accountNumber } = await revealInstruction(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '');
    consolePage(ctx, 'instructions', session, T.revealedInstruction(staffText(ctx), instruction, accountNumber, session.csrfToken));
  }),
);

/** The version the reveal showed (a hidden field of its verify form): required, a whole number. */
function destinationVersionOf(form: URLSearchParams): number {
  const v = (form.get('destination_version') ?? '').trim();
  if (!/^[1-9]\d{0,8}$/.test(v)) throw consoleErrors.destinationVersionRequired();
  return Number(v);
}

consoleRouter.post(
  '/admin/instructions/:id/verify',
  move('/admin/instructions', 'payout_instruction.verify', async (ctx, form) => {
    const version = destinationVersionOf(form);
    await verifyInstruction(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', version);
  }),
);

/** Staff decline (review R4): the version the queue row showed and a reason the workspace sees (as the admin API's schema: 1 to 1000 characters). */
consoleRouter.post(
  '/admin/instructions/:id/decline',
  move('/admin/instructions', 'payout_instruction.decline', async (ctx, form) => {
    const version = destinationVersionOf(form);
    const reason = (form.get('reason') ?? '').trim();
    if (reason === '') throw consoleErrors.declineReasonRequired();
    if (reason.length > DECLINE_REASON.max) throw consoleErrors.fieldTooLong('reason', DECLINE_REASON.max);
    await declineInstruction(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', version, reason);
  }),
);

queueRoute('/admin/payouts', 'payouts', (page, by, status) => payoutStaff.openPayouts(db, page, by, status === null ? payoutStaff.OPEN_PAYOUT_STATUSES : [status]), T.payoutsTable, payoutStaff.OPEN_PAYOUT_STATUSES);

consoleRouter.post(
  '/admin/payouts/:id/settle',
  move('/admin/payouts', 'disbursement.settle', async (ctx, form) => {
    await payoutStaff.settleByStaff(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '');
  }),
);

consoleRouter.post(
  '/admin/payouts/:id/fail',
  move('/admin/payouts', 'disbursement.fail', async (ctx, form) => {
    // As the admin API's schema: a reason of 1 to 1000 characters (the workspace sees it).
    const reason = (form.get('reason') ?? '').trim();
    if (reason === '') throw consoleErrors.failReasonRequired();
    if (reason.length > 1000) throw consoleErrors.fieldTooLong('reason', 1000);
    await payoutStaff.failByStaff(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', reason);
  }),
);

queueRoute('/admin/rulings', 'rulings', (page, by) => dealStaff.disputedForStaff(db, page, by), T.rulingsTable);

const RULING_OUTCOMES: readonly rulings.RulingInput['outcome'][] = ['release', 'refund', 'split'];

/** The ruling form as the admin API's schema reads its body: an outcome; release_amount (whole rupiah, 1 to 50,000,000,000) with split only. */
function rulingOf(form: URLSearchParams): rulings.RulingInput {
  const outcome = RULING_OUTCOMES.find((o) => o === (form.get('outcome') ?? '').trim());
  if (!outcome) throw consoleErrors.invalidRulingOutcome();
  const amount = (form.get('release_amount') ?? '').trim();
  if (outcome !== 'split') {
    if (amount !== '') throw consoleErrors.releaseAmountOnlyWithSplit();
    return { outcome };
  }
  if (!/^\d{1,11}$/.test(amount) || Number(amount) < 1 || Number(amount) > 50_000_000_000) throw consoleErrors.releaseAmountRequired();
  return { outcome, release_amount: Number(amount) };
}

consoleRouter.post(
  '/admin/rulings/:id/resolve',
  move('/admin/rulings', 'milestone.resolve_dispute', async (ctx, form) => {
    await rulings.resolveDispute(undefined, staffWith(ctx, noteOf(form)), ctx.params.id ?? '', rulingOf(form));
  }),
);

queueRoute('/admin/users', 'users', findUsers, T.usersTable);

consoleRouter.post(
  '/admin/users/:id/suspend',
  move('/admin/users', 'user.suspend', async (ctx, form) => {
    await suspendUser(staffWith(ctx, noteOf(form)), ctx.params.id ?? '');
  }),
);

consoleRouter.post(
  '/admin/users/:id/reactivate',
  move('/admin/users', 'user.reactivate', async (ctx, form) => {
    await reactivateUser(staffWith(ctx, noteOf(form)), ctx.params.id ?? '');
  }),
);

consoleRouter.post(
  '/admin/sign-out',
  page(async (ctx) => {
    const form = await formOf(ctx);
    const session = await pageSession(ctx);
    if (session) {
      assertCsrf(form, session);
      await authService.logout(session.sessionId);
      clearSessionCookie(ctx);
    }
    redirect(ctx, '/sign-in');
  }),
);

/**
 * The operator console's words, in English (the default: a staff tool) and Indonesian (a
 * staff member's choice, the `console_lang` cookie). Every visible string of the console's
 * templates (api/pages/console.ts, console-records.ts) comes from here; status values and
 * event names (machine codes such as `pending`, `dispute.resolve`) are shown as they are.
 * Typed: a text missing in one language is a type error.
 */
import type { AttentionReason } from '../../shared/payments/repo.js';
import type { Allocation } from '../../shared/deals/fees.js';
import type { DocType } from '../../shared/kyb/slots.js';
import type { Lang } from './html.js';

export type ConsoleSection = 'overview' | 'disputes' | 'payments' | 'withdrawals' | 'orders' | 'kyb' | 'funding' | 'instructions' | 'payouts' | 'rulings' | 'users';

export interface ConsoleText {
  /** The page's title: the console and the section's name. */
  title: (section: string) => string;
  nav: Record<ConsoleSection, string> & { queues: string; signOut: string };
  /** The nav's link to the other language, named in that language. */
  other: { lang: Lang; name: string };
  /** The flash after a move: the move's code. */
  done: (action: string) => string;

  /** Words several pages share. */
  c: {
    created: string;
    amount: string;
    status: string;
    buyer: string;
    seller: string;
    workspace: string;
    counterparty: string;
    deal: string;
    milestone: string;
    currency: string;
    reason: string;
    note: string;
    noteWhy: string;
    why: string;
    whyOptional: string;
    auditNote: string;
    confirm: string;
    approve: string;
    reject: string;
    rule: string;
    ruling: string;
    open: string;
    none: string;
    nothingToRule: string;
    when: string;
    event: string;
    by: string;
    summary: string;
    label: string;
    bank: string;
    accountHolder: string;
    accountNumber: string;
    version: string;
    submitted: string;
    decided: string;
    riskTier: string;
    legalName: string;
    entityType: string;
    country: string;
    sandbox: string;
    live: string;
    sandboxNoMoney: string;
    nextPage: string;
    net: (amount: string) => string;
    itemPlusFee: (item: string, fee: string) => string;
    total: string;
    what: string;
    method: string;
    requested: string;
    queued: string;
    destination: string;
    buyerFee: string;
    sellerFee: string;
    documents: string;
    payments: string;
    events: string;
    recentEvents: string;
    reveal: string;
    revealAndVerify: string;
    decline: string;
    role: string;
    suspend: string;
    reactivate: string;
    releaseToSeller: string;
    refundBuyer: string;
    hold: string;
    confirmRuling: string;
    confirmTransfer: string;
    cancelled: string;
    paid: string;
    activated: string;
    title: string;
    fee: string;
    joined: string;
    refunded: string;
    escrow: string;
    order: string;
    escrows: string;
    orders: string;
    withdrawals: string;
    disputes: string;
    users: string;
    payouts: string;
    versionN: (n: number) => string;
    riskTierOf: (tier: string) => string;
  };

  overview: {
    heading: string;
    disputes: string;
    payments: string;
    withdrawals: string;
    orders: string;
    kyb: string;
    funding: string;
    instructions: string;
    payouts: string;
    rulings: string;
    users: string;
    usersMoves: string;
    queues: string;
  };

  filters: {
    /** The status filter's choice of every status the queue holds. */
    all: string;
    search: string;
    waitingAtLeast: string;
    hours: string;
    filter: string;
    clear: string;
    longestFirst: string;
  };

  disputes: {
    heading: string;
    placeholder: string;
    openAndOnHold: string;
    open: string;
    onHold: string;
    opened: string;
    escrow: string;
    parties: string;
  };

  payments: {
    heading: string;
    intro: string;
    placeholder: string;
    nothing: string;
    for: string;
    why: string;
    decision: string;
    attention: Record<AttentionReason, string>;
    whereItWent: string;
    credit: string;
    confirmCredit: (amount: string) => string;
    markReturned: string;
    confirmReturned: (amount: string) => string;
    rejectNotReceived: string;
    claimedAt: (when: string) => string;
    escrowRef: (id: string) => string;
    orderRef: (id: string) => string;
    gatewayReported: (amount: string) => string;
  };

  withdrawals: {
    heading: string;
    placeholder: string;
    nothing: string;
    who: string;
    risk: string;
    decision: string;
    confirmApprove: string;
    noteRequired: string;
  };

  users: {
    heading: string;
    placeholder: string;
    joinedAtLeast: string;
    hoursAgo: string;
    newestFirst: string;
    nothing: string;
    account: string;
    move: string;
    confirmSuspend: string;
  };

  orders: {
    heading: string;
    placeholder: string;
    nothing: string;
    sla: string;
    move: string;
    order: string;
    confirmPayment: string;
    startProcessing: string;
    confirmDeliver: string;
    credentialsPlaceholder: string;
    credentials: string;
    deliveryNote: string;
    deliver: string;
    confirmRefund: string;
    refund: string;
  };

  kyb: {
    heading: string;
    intro: string;
    placeholder: string;
    nothing: string;
    dueBy: string;
    applicant: string;
    whose: string;
    workspaceApplication: string;
    notGiven: string;
    decision: string;
    nothingToDecide: (status: string) => string;
    confirmApproveCounterparty: (name: string) => string;
    confirmApproveWorkspace: (name: string) => string;
    requestChanges: string;
    requestChangesIntro: (nextVersion: number) => string;
    fieldPlaceholder: string;
    fieldLabel: (n: number) => string;
    whatToChange: string;
    noteLabel: (n: number) => string;
    confirmReject: string;
    rejectReason: string;
    removedPerson: string;
    queueLink: string;
    applicationHeading: (name: string, version: number) => string;
    counterpartyOf: (workspace: string) => string;
    kybStatus: (status: string) => string;
    company: string;
    nib: string;
    npwp: string;
    address: string;
    industry: string;
    monthlyVolume: string;
    website: string;
    people: string;
    noPeople: string;
    name: string;
    position: string;
    roles: string;
    identity: string;
    nationality: string;
    ownership: string;
    nik: string;
    passport: string;
    bankAccount: string;
    holder: string;
    noDocuments: string;
    linksUntil: (when: string) => string;
    document: string;
    file: string;
    added: string;
    docTypes: Record<DocType, string>;
    earlierChanges: string;
    history: string;
    tierOrReason: string;
    thisPage: string;
  };

  funding: {
    heading: string;
    intro: string;
    placeholder: string;
    nothing: string;
    expect: string;
    confirmArrived: (amount: string, milestone: number, reference: string) => string;
    notePlaceholder: string;
  };

  deal: {
    allocation: Record<Allocation, string>;
    override: string;
    cancelledNoOverride: string;
    overrideIntro: string;
    confirmOverride: (reference: string) => string;
    allocationLabel: string;
    sharePercent: string;
    overrideButton: string;
    payoutsIntro: string;
    noPayouts: string;
    settledAt: (when: string) => string;
    approvals: string;
    noApprovals: string;
    round: string;
    slot: string;
    approver: string;
    noDocuments: string;
    type: string;
    filedBy: string;
    filed: string;
    visibleTo: string;
    heading: (reference: string, title: string) => string;
    sandboxDeal: string;
    owner: string;
    rate: string;
    minimum: (amount: string) => string;
    volumeTier: (amount: string) => string;
    platformFee: string;
    shares: (workspace: number, counterparty: number) => string;
    buyerFeeWorkspace: string;
    sellerFeeCounterparty: string;
    fundingTotal: string;
    payoutTotal: string;
    frozen: string;
    frozenYes: string;
    frozenNo: string;
    milestones: string;
    number: string;
    fundingAmount: string;
    payoutAmount: string;
    sharesHead: string;
    funded: string;
    sharesOpen: string;
    sharesFixed: string;
    noEvents: string;
  };

  instructions: {
    heading: string;
    intro: (perPage: number) => string;
    placeholder: string;
    nothing: string;
    pendingSince: string;
    confirmDecline: (label: string, bank: string) => string;
    reasonPlaceholder: string;
  };

  reveal: {
    back: string;
    heading: (label: string) => string;
    recorded: string;
    sandboxSigns: string;
    liveSigns: string;
    confirmVerify: (bank: string, account: string, holder: string, counterparty: string) => string;
    notePlaceholder: string;
    verify: string;
    declined: string;
    alreadyVerified: string;
  };

  payouts: {
    heading: string;
    intro: string;
    placeholder: string;
    nothing: string;
    settle: string;
    fail: string;
    revealAccount: string;
    claimedUntil: (when: string) => string;
    attempts: (n: number) => string;
    confirmSettle: (amount: string, destination: string) => string;
    settleNote: string;
    confirmFail: (amount: string) => string;
    failReason: string;
  };

  rulings: {
    heading: string;
    intro: string;
    placeholder: string;
    disputed: string;
    held: (held: string, refunded: string) => string;
    confirmRuling: (milestone: number, reference: string) => string;
    release: string;
    refund: string;
    split: string;
    releaseAmount: (min: string, max: string) => string;
  };

  records: {
    provider: string;
    gatewayOrderId: string;
    claim: (reference: string) => string;
    staffActions: string;
    movesAsStaff: string;
    action: string;
    on: string;
    confirmSuspend: (email: string) => string;
    email: string;
    notVerified: string;
    username: string;
    phone: string;
    identityCheck: string;
    twoStep: string;
    balance: string;
    item: string;
    asBuyer: string;
    asSeller: string;
    reference: string;
    sessions: string;
    started: string;
    ends: string;
    from: string;
    state: string;
    ended: (when: string) => string;
    sessionLive: string;
    escrowHeading: (item: string) => string;
    expires: string;
    sent: string;
    received: string;
    autoRelease: string;
    released: string;
    disputedAt: string;
    feeOf: (amount: string) => string;
    source: string;
    partnerReference: (reference: string) => string;
    shipment: string;
    description: string;
    cancelReason: string;
    opened: string;
    outcome: string;
    ruleOpen: string;
    orderHeading: (label: string) => string;
    autoRefunded: string;
    paidVia: string;
    deliverBy: string;
    delivered: string;
    workspaceHeading: (name: string) => string;
    mode: string;
    platformDefault: string;
    feeRate: (percent: string, minimum: string | null) => string;
    members: string;
    member: string;
    removed: (when: string) => string;
    kybVersions: string;
    review: string;
    counterparties: string;
    name: string;
    relationship: string;
    instructions: string;
    since: (when: string) => string;
    keys: string;
    scopes: string;
    key: string;
    lastUsed: string;
    revoked: (when: string) => string;
    active: string;
    deals: string;
  };
}

const EN: ConsoleText = {
  title: (section) => `Console · ${section}`,
  nav: {
    overview: 'Overview',
    disputes: 'Disputes',
    payments: 'Payments',
    withdrawals: 'Withdrawals',
    orders: 'Orders',
    kyb: 'KYB',
    funding: 'Funding',
    instructions: 'Instructions',
    payouts: 'Payouts',
    rulings: 'Rulings',
    users: 'Users',
    queues: 'Queues',
    signOut: 'Sign out',
  },
  other: { lang: 'id', name: 'Bahasa Indonesia' },
  done: (action) => `Done: ${action}`,

  c: {
    created: 'Created',
    amount: 'Amount',
    status: 'Status',
    buyer: 'Buyer',
    seller: 'Seller',
    workspace: 'Workspace',
    counterparty: 'Counterparty',
    deal: 'Deal',
    milestone: 'Milestone',
    currency: 'Currency',
    reason: 'Reason',
    note: 'Note',
    noteWhy: 'Note (why)',
    why: 'Why',
    whyOptional: 'Why (optional)',
    auditNote: 'Note for the audit trail (optional)',
    confirm: 'Confirm',
    approve: 'Approve',
    reject: 'Reject',
    rule: 'Rule',
    ruling: 'Ruling',
    open: 'Open',
    none: 'None.',
    nothingToRule: 'Nothing to rule.',
    when: 'When',
    event: 'Event',
    by: 'By',
    summary: 'Summary',
    label: 'Label',
    bank: 'Bank',
    accountHolder: 'Account holder',
    accountNumber: 'Account number',
    version: 'Version',
    submitted: 'Submitted',
    decided: 'Decided',
    riskTier: 'Risk tier',
    legalName: 'Legal name',
    entityType: 'Entity type',
    country: 'Country',
    sandbox: 'sandbox',
    live: 'live',
    sandboxNoMoney: 'sandbox: no real money',
    nextPage: 'Next page',
    net: (amount) => `net ${amount}`,
    itemPlusFee: (item, fee) => `item ${item} + fee ${fee}`,
    total: 'Total',
    what: 'What',
    method: 'Method',
    requested: 'Requested',
    queued: 'Queued',
    destination: 'Destination',
    buyerFee: 'Buyer fee',
    sellerFee: 'Seller fee',
    documents: 'Documents',
    payments: 'Payments',
    events: 'Events',
    recentEvents: 'Recent events',
    reveal: 'Reveal',
    revealAndVerify: 'Reveal and verify',
    decline: 'Decline',
    role: 'Role',
    suspend: 'Suspend',
    reactivate: 'Reactivate',
    releaseToSeller: 'Release to seller',
    refundBuyer: 'Refund buyer',
    hold: 'Hold',
    confirmRuling: 'Record this ruling? Release and refund move money.',
    confirmTransfer: 'Confirm that this transfer arrived?',
    cancelled: 'Cancelled',
    paid: 'Paid',
    activated: 'Activated',
    title: 'Title',
    fee: 'Fee',
    joined: 'Joined',
    refunded: 'Refunded',
    escrow: 'escrow',
    order: 'order',
    escrows: 'Escrows',
    orders: 'Payment-service orders',
    withdrawals: 'Withdrawals',
    disputes: 'Disputes',
    users: 'Users',
    payouts: 'Payouts',
    versionN: (n) => `Version ${n}`,
    riskTierOf: (tier) => `risk tier ${tier}`,
  },

  overview: {
    heading: 'Operator console',
    disputes: 'Disputes to rule',
    payments: 'Payments needing staff',
    withdrawals: 'Withdrawals to approve',
    orders: 'Payment-service orders to move',
    kyb: 'KYB applications to review',
    funding: 'Live deal milestones awaiting funding confirmation',
    instructions: 'Payout instructions to verify',
    payouts: 'Deal payouts to settle or fail',
    rulings: 'Disputed deal milestones to rule',
    users: 'Users',
    usersMoves: '(suspend, reactivate)',
    queues: 'Queues (Bull Board)',
  },

  filters: {
    all: 'All',
    search: 'Search',
    waitingAtLeast: 'Waiting at least',
    hours: 'hours',
    filter: 'Filter',
    clear: 'Clear',
    longestFirst: 'The longest waiting first.',
  },

  disputes: {
    heading: 'Disputes to rule',
    placeholder: 'Escrow or dispute id, item, e-mail, username, name',
    openAndOnHold: 'Open and on hold',
    open: 'Open',
    onHold: 'On hold',
    opened: 'Opened',
    escrow: 'Escrow',
    parties: 'Parties',
  },

  payments: {
    heading: 'Payments needing staff',
    intro:
      "Claimed manual transfers to confirm or reject (confirming an order's transfer marks the order paid); transfers claimed after the escrow or order closed and gateway payments of the wrong amount, to credit to the buyer's balance or mark returned.",
    placeholder: 'Payment, escrow or order id, gateway order id, claim reference, e-mail, username, name, item',
    nothing: 'Nothing waiting.',
    for: 'For',
    why: 'Why',
    decision: 'Decision',
    attention: {
      claimed: 'Claimed transfer',
      late_claim: 'Claimed late: the escrow or order no longer takes it',
      amount_mismatch: 'Gateway amount mismatch',
    },
    whereItWent: 'Where it went (required)',
    credit: 'Credit to buyer balance',
    confirmCredit: (amount) => `Credit ${amount} to the buyer's balance?`,
    markReturned: 'Mark returned',
    confirmReturned: (amount) => `Record that ${amount} was returned to the payer outside the service?`,
    rejectNotReceived: 'Reject (not received)',
    claimedAt: (when) => `claimed ${when}`,
    escrowRef: (id) => `escrow ${id}`,
    orderRef: (id) => `order ${id}`,
    gatewayReported: (amount) => `gateway reported ${amount}`,
  },

  withdrawals: {
    heading: 'Withdrawals to approve',
    placeholder: 'Withdrawal or account id, e-mail, username, name',
    nothing: 'No pending withdrawals.',
    who: 'Who',
    risk: 'Risk',
    decision: 'Decision',
    confirmApprove: 'Approve this payout?',
    noteRequired: 'Note (required)',
  },

  users: {
    heading: 'Users',
    placeholder: 'Account id, e-mail, username or name',
    joinedAtLeast: 'Joined at least',
    hoursAgo: 'hours ago',
    newestFirst: 'The newest accounts first.',
    nothing: 'No account matches.',
    account: 'Account',
    move: 'Move',
    confirmSuspend: 'Suspend this account? Its sessions end.',
  },

  orders: {
    heading: 'Payment-service orders',
    placeholder: 'Order or buyer id, e-mail, username, name, what is bought',
    nothing: 'No orders waiting.',
    sla: 'SLA',
    move: 'Move',
    order: 'Order',
    confirmPayment: 'Confirm payment',
    startProcessing: 'Start processing',
    confirmDeliver: 'Deliver this order? The money becomes final.',
    credentialsPlaceholder: 'Credentials (sealed, shown only to the buyer)',
    credentials: 'Credentials',
    deliveryNote: 'Delivery note',
    deliver: 'Deliver',
    confirmRefund: "Refund this order in full to the buyer's balance?",
    refund: 'Refund',
  },

  kyb: {
    heading: 'KYB applications to review',
    intro: "Submitted applications, live workspaces' first, oldest submission first, a page at a time. Review takes 1 to 3 business days; open one to see its documents and decide.",
    placeholder: 'Application, workspace or counterparty id, workspace, counterparty or legal name',
    nothing: 'Nothing to review.',
    dueBy: 'Due by',
    applicant: 'Applicant',
    whose: 'Whose',
    workspaceApplication: 'Workspace application',
    notGiven: 'not given',
    decision: 'Decision',
    nothingToDecide: (status) => `This version is ${status}: there is nothing to decide.`,
    confirmApproveCounterparty: (name) => `Approve this application? ${name} becomes a verified counterparty.`,
    confirmApproveWorkspace: (name) => `Approve this application? ${name} goes live at once.`,
    requestChanges: 'Request changes',
    requestChangesIntro: (next) => `One row per change: the field or document, and what the applicant must do. Version ${next} opens as a draft carrying these notes.`,
    fieldPlaceholder: 'Field (e.g. company.npwp)',
    fieldLabel: (n) => `Field ${n}`,
    whatToChange: 'What to change',
    noteLabel: (n) => `Note ${n}`,
    confirmReject: 'Reject this application? The applicant sees the reason.',
    rejectReason: 'Reason (the applicant sees it)',
    removedPerson: 'removed person',
    queueLink: 'KYB queue',
    applicationHeading: (name, version) => `KYB application: ${name}, version ${version}`,
    counterpartyOf: (workspace) => `Counterparty of ${workspace}`,
    kybStatus: (status) => `KYB ${status}`,
    company: 'Company',
    nib: 'NIB',
    npwp: 'NPWP',
    address: 'Address',
    industry: 'Industry',
    monthlyVolume: 'Monthly volume',
    website: 'Website',
    people: 'People',
    noPeople: 'No one listed.',
    name: 'Name',
    position: 'Position',
    roles: 'Roles',
    identity: 'Identity',
    nationality: 'Nationality',
    ownership: 'Ownership',
    nik: 'NIK',
    passport: 'Passport',
    bankAccount: 'Bank account',
    holder: 'Holder',
    noDocuments: 'No documents.',
    linksUntil: (when) => `Each link is signed for you alone and works until ${when} UTC; reload the page for fresh links.`,
    document: 'Document',
    file: 'File',
    added: 'Added',
    docTypes: {
      akta_pendirian: 'Deed of establishment (Akta Pendirian)',
      sk_kemenkumham: 'Ministry of Law approval (SK Kemenkumham)',
      akta_perubahan: 'Deed of amendment (Akta Perubahan)',
      bank_proof: 'Proof of bank account',
      ktp: 'KTP',
      passport: 'Passport',
    },
    earlierChanges: 'Change requests of earlier versions',
    history: 'History',
    tierOrReason: 'Risk tier / reason',
    thisPage: '(this page)',
  },

  funding: {
    heading: 'Funding to confirm',
    intro:
      "Milestones of live deals awaiting funding, oldest activation first, a page at a time. Confirm one once its funding amount (the amount plus the workspace's fee share) has arrived: the milestone becomes funded and the money is posted to the ledger.",
    placeholder: 'Deal, milestone or workspace id, deal reference or title, milestone, workspace name',
    nothing: 'Nothing to confirm.',
    expect: 'Funding to expect',
    confirmArrived: (amount, milestone, reference) => `Confirm that ${amount} arrived for milestone ${milestone} of ${reference}?`,
    notePlaceholder: 'Note (e.g. the bank reference)',
  },

  deal: {
    allocation: {
      buyer: 'buyer: the workspace pays the fee',
      seller: 'seller: the counterparty bears the fee',
      split: 'split by percent',
    },
    override: 'Override the fee split',
    cancelledNoOverride: 'This deal is cancelled: its fee split cannot be changed.',
    overrideIntro:
      "At both parties' request (spec 4.5 rule 6). The platform fee stays; only the shares of milestones not yet funded are recomputed. A split those shares cannot reach exactly is refused. The reason appears in the workspace's event feed.",
    confirmOverride: (reference) => `Change the fee split of ${reference}?`,
    allocationLabel: 'Allocation',
    sharePercent: "Workspace's share in percent (required with split; buyer means 100, seller 0)",
    overrideButton: 'Override',
    payoutsIntro: 'Each payout shows the destination it was released to (label, bank, holder, masked number), as kept on the payout at release.',
    noPayouts: 'No payouts.',
    settledAt: (when) => `settled ${when}`,
    approvals: 'Approvals',
    noApprovals: 'No approval slots yet (they open when evidence is submitted).',
    round: 'Round',
    slot: 'Slot',
    approver: 'Approver',
    noDocuments: 'No documents on its milestones.',
    type: 'Type',
    filedBy: 'Filed by',
    filed: 'Filed',
    visibleTo: 'Visible to',
    heading: (reference, title) => `Deal ${reference}: ${title}`,
    sandboxDeal: '(sandbox deal: no real money)',
    owner: 'Owner',
    rate: 'Rate',
    minimum: (amount) => `minimum ${amount}`,
    volumeTier: (amount) => `volume tier from ${amount}`,
    platformFee: 'Platform fee',
    shares: (workspace, counterparty) => `workspace ${workspace}% · counterparty ${counterparty}%`,
    buyerFeeWorkspace: 'Buyer fee (workspace)',
    sellerFeeCounterparty: 'Seller fee (counterparty)',
    fundingTotal: 'Funding total',
    payoutTotal: 'Payout total',
    frozen: 'Frozen',
    frozenYes: 'yes (activated)',
    frozenNo: 'no (draft)',
    milestones: 'Milestones',
    number: 'No.',
    fundingAmount: 'Funding amount',
    payoutAmount: 'Payout amount',
    sharesHead: 'Shares',
    funded: 'Funded',
    sharesOpen: 'open',
    sharesFixed: 'fixed',
    noEvents: 'No events.',
  },

  instructions: {
    heading: 'Payout instructions to verify',
    intro: (perPage) =>
      `New counterparty bank destinations, ones that were edited, and every one of a workspace that went live: live workspaces first, then sandbox ones, each oldest pending first, ${perPage} to a page. Reveal the full account number (each reveal is recorded under your name), check it with the workspace outside the service (a call-back to a known contact, the bank's name check), then verify what you were shown: money is paid only to verified instructions, and verifying signs the label, bank, holder and number as revealed. If the instruction changed since, the verification is refused. Decline a destination you cannot confirm: the workspace sees your reason and may edit it (it comes back here) or delete it.`,
    placeholder: 'Instruction, workspace or counterparty id, workspace, counterparty, label, holder, bank',
    nothing: 'Nothing to verify.',
    pendingSince: 'Pending since',
    confirmDecline: (label, bank) => `Decline ${label} (${bank})? The workspace sees your reason.`,
    reasonPlaceholder: 'Reason (the workspace sees it)',
  },

  reveal: {
    back: 'Payout instructions to verify',
    heading: (label) => `Payout instruction: ${label}`,
    recorded: 'This reveal is recorded in the staff audit under your name.',
    sandboxSigns: 'sandbox: verifying signs for sandbox money only',
    liveSigns: 'live: verifying signs for real money',
    confirmVerify: (bank, account, holder, counterparty) => `Verify ${bank} ${account} (${holder}) for ${counterparty}? Payouts may then be sent to it.`,
    notePlaceholder: 'Note (how it was checked)',
    verify: 'Verify this destination',
    declined: 'Declined: the workspace may edit it (it comes back to the queue) or delete it.',
    alreadyVerified: 'Already verified.',
  },

  payouts: {
    heading: 'Payouts to settle or fail',
    intro:
      'Queued and processing payouts of released milestones, live ones first, oldest first, a page at a time. With no payout provider, pay each by bank transfer and settle it; fail one the bank refused, with the reason (the workspace sees it): its money returns to the milestone for a new release. A payout the worker is sending cannot be moved until its claim runs out.',
    placeholder: 'Payout, deal, milestone or workspace id, deal reference, milestone, counterparty, workspace, payout reference',
    nothing: 'No open payouts.',
    settle: 'Settle',
    fail: 'Fail',
    revealAccount: 'Reveal the account number',
    claimedUntil: (when) => `claimed until ${when}`,
    attempts: (n) => `attempts ${n}`,
    confirmSettle: (amount, destination) => `Settle ${amount} to ${destination}? Only once the transfer has left.`,
    settleNote: 'Note (e.g. the transfer reference)',
    confirmFail: (amount) => `Fail this payout of ${amount}? The money returns to the milestone.`,
    failReason: 'Reason (required; the workspace sees it)',
  },

  rulings: {
    heading: 'Disputed deal milestones to rule',
    intro:
      "Milestones the workspace disputed, live deals first, oldest dispute first, a page at a time. Release: the milestone is approved again and the workspace releases it as usual. Refund: everything held, with the workspace's fee share, goes back to the workspace. Split: the release amount (more than the counterparty's fee share, less than the amount held) stays for the counterparty and the rest is refunded now.",
    placeholder: 'Deal, milestone or workspace id, deal reference or title, milestone, workspace name',
    disputed: 'Disputed',
    held: (held, refunded) => `held ${held}: ${refunded} refunded by an earlier ruling`,
    confirmRuling: (milestone, reference) => `Record this ruling on milestone ${milestone} of ${reference}? Refund and split move money at once.`,
    release: 'Release to the counterparty',
    refund: 'Refund the workspace',
    split: 'Split',
    releaseAmount: (min, max) => `Release amount (split only, ${min} to ${max})`,
  },

  records: {
    provider: 'Provider',
    gatewayOrderId: 'Gateway order id',
    claim: (reference) => `claim ${reference}`,
    staffActions: 'Staff actions',
    movesAsStaff: 'Moves made as staff',
    action: 'Action',
    on: 'On',
    confirmSuspend: (email) => `Suspend ${email}? Their sessions end at once.`,
    email: 'E-mail',
    notVerified: '(not verified)',
    username: 'Username',
    phone: 'Phone',
    identityCheck: 'Identity check',
    twoStep: 'Two-step sign-in',
    balance: 'Balance',
    item: 'Item',
    asBuyer: 'buyer',
    asSeller: 'seller',
    reference: 'Reference',
    sessions: 'Sessions',
    started: 'Started',
    ends: 'Ends',
    from: 'From',
    state: 'State',
    ended: (when) => `ended ${when}`,
    sessionLive: 'live',
    escrowHeading: (item) => `Escrow: ${item}`,
    expires: 'Expires',
    sent: 'Sent',
    received: 'Received',
    autoRelease: 'Auto-release',
    released: 'Released',
    disputedAt: 'Disputed',
    feeOf: (amount) => `fee ${amount}`,
    source: 'Source',
    partnerReference: (reference) => `partner reference ${reference}`,
    shipment: 'Shipment',
    description: 'Description',
    cancelReason: 'Cancel reason',
    opened: 'Opened',
    outcome: 'Outcome',
    ruleOpen: 'Rule the open dispute',
    orderHeading: (label) => `Order: ${label}`,
    autoRefunded: '(refunded when its time ran out)',
    paidVia: 'Paid via',
    deliverBy: 'Deliver by',
    delivered: 'Delivered',
    workspaceHeading: (name) => `Workspace: ${name}`,
    mode: 'Mode',
    platformDefault: 'the platform default',
    feeRate: (percent, minimum) => `${percent}%${minimum === null ? '' : `, minimum ${minimum}`}`,
    members: 'Members',
    member: 'Member',
    removed: (when) => `removed ${when}`,
    kybVersions: 'KYB versions',
    review: 'Review',
    counterparties: 'Counterparties',
    name: 'Name',
    relationship: 'Relationship',
    instructions: 'Payout instructions',
    since: (when) => `since ${when}`,
    keys: 'API keys',
    scopes: 'Scopes',
    key: 'Key',
    lastUsed: 'Last used',
    revoked: (when) => `revoked ${when}`,
    active: 'active',
    deals: 'Deals',
  },
};

const ID: ConsoleText = {
  title: (section) => `Konsol · ${section}`,
  nav: {
    overview: 'Ringkasan',
    disputes: 'Sengketa',
    payments: 'Pembayaran',
    withdrawals: 'Penarikan',
    orders: 'Pesanan',
    kyb: 'KYB',
    funding: 'Pendanaan',
    instructions: 'Instruksi pembayaran',
    payouts: 'Pencairan',
    rulings: 'Putusan',
    users: 'Pengguna',
    queues: 'Antrean',
    signOut: 'Keluar',
  },
  other: { lang: 'en', name: 'English' },
  done: (action) => `Selesai: ${action}`,

  c: {
    created: 'Dibuat',
    amount: 'Jumlah',
    status: 'Status',
    buyer: 'Pembeli',
    seller: 'Penjual',
    workspace: 'Ruang kerja',
    counterparty: 'Rekanan',
    deal: 'Kesepakatan',
    milestone: 'Tahapan',
    currency: 'Mata uang',
    reason: 'Alasan',
    note: 'Catatan',
    noteWhy: 'Catatan (alasannya)',
    why: 'Alasan',
    whyOptional: 'Alasan (opsional)',
    auditNote: 'Catatan untuk jejak audit (opsional)',
    confirm: 'Konfirmasi',
    approve: 'Setujui',
    reject: 'Tolak',
    rule: 'Putuskan',
    ruling: 'Putusan',
    open: 'Buka',
    none: 'Tidak ada.',
    nothingToRule: 'Tidak ada yang perlu diputus.',
    when: 'Waktu',
    event: 'Peristiwa',
    by: 'Oleh',
    summary: 'Ringkasan',
    label: 'Label',
    bank: 'Bank',
    accountHolder: 'Pemilik rekening',
    accountNumber: 'Nomor rekening',
    version: 'Versi',
    submitted: 'Diajukan',
    decided: 'Diputuskan',
    riskTier: 'Tingkat risiko',
    legalName: 'Nama resmi',
    entityType: 'Jenis badan usaha',
    country: 'Negara',
    sandbox: 'sandbox',
    live: 'live',
    sandboxNoMoney: 'sandbox: bukan uang sungguhan',
    nextPage: 'Halaman berikutnya',
    net: (amount) => `bersih ${amount}`,
    itemPlusFee: (item, fee) => `barang ${item} + biaya ${fee}`,
    total: 'Total',
    what: 'Yang dibeli',
    method: 'Metode',
    requested: 'Diajukan',
    queued: 'Masuk antrean',
    destination: 'Tujuan',
    buyerFee: 'Biaya pembeli',
    sellerFee: 'Biaya penjual',
    documents: 'Dokumen',
    payments: 'Pembayaran',
    events: 'Peristiwa',
    recentEvents: 'Peristiwa terbaru',
    reveal: 'Tampilkan',
    revealAndVerify: 'Tampilkan dan verifikasi',
    decline: 'Tolak',
    role: 'Peran',
    suspend: 'Bekukan',
    reactivate: 'Aktifkan kembali',
    releaseToSeller: 'Teruskan ke penjual',
    refundBuyer: 'Kembalikan ke pembeli',
    hold: 'Tahan',
    confirmRuling: 'Catat putusan ini? Meneruskan atau mengembalikan dana langsung memindahkan uang.',
    confirmTransfer: 'Konfirmasi bahwa transfer ini sudah masuk?',
    cancelled: 'Dibatalkan',
    paid: 'Dibayar',
    activated: 'Diaktifkan',
    title: 'Judul',
    fee: 'Biaya',
    joined: 'Bergabung',
    refunded: 'Dikembalikan',
    escrow: 'rekber',
    order: 'pesanan',
    escrows: 'Rekber',
    orders: 'Pesanan jasa bayar',
    withdrawals: 'Penarikan',
    disputes: 'Sengketa',
    users: 'Pengguna',
    payouts: 'Pencairan',
    versionN: (n) => `Versi ${n}`,
    riskTierOf: (tier) => `tingkat risiko ${tier}`,
  },

  overview: {
    heading: 'Konsol operator',
    disputes: 'Sengketa yang perlu diputus',
    payments: 'Pembayaran yang perlu ditangani staf',
    withdrawals: 'Penarikan yang perlu disetujui',
    orders: 'Pesanan jasa bayar yang perlu diproses',
    kyb: 'Pengajuan KYB yang perlu ditinjau',
    funding: 'Tahapan kesepakatan live yang menunggu konfirmasi pendanaan',
    instructions: 'Instruksi pembayaran yang perlu diverifikasi',
    payouts: 'Pencairan kesepakatan yang perlu diselesaikan atau digagalkan',
    rulings: 'Tahapan kesepakatan bersengketa yang perlu diputus',
    users: 'Pengguna',
    usersMoves: '(bekukan, aktifkan kembali)',
    queues: 'Antrean (Bull Board)',
  },

  filters: {
    all: 'Semua',
    search: 'Cari',
    waitingAtLeast: 'Menunggu minimal',
    hours: 'jam',
    filter: 'Saring',
    clear: 'Hapus saringan',
    longestFirst: 'Yang paling lama menunggu tampil lebih dulu.',
  },

  disputes: {
    heading: 'Sengketa yang perlu diputus',
    placeholder: 'Id rekber atau sengketa, barang, e-mail, nama pengguna, nama',
    openAndOnHold: 'Terbuka dan ditahan',
    open: 'Terbuka',
    onHold: 'Ditahan',
    opened: 'Dibuka',
    escrow: 'Rekber',
    parties: 'Para pihak',
  },

  payments: {
    heading: 'Pembayaran yang perlu ditangani staf',
    intro:
      'Transfer manual yang diklaim, untuk dikonfirmasi atau ditolak (mengonfirmasi transfer sebuah pesanan menandai pesanan itu lunas); transfer yang diklaim setelah rekber atau pesanannya ditutup dan pembayaran gateway dengan jumlah yang salah, untuk dimasukkan ke saldo pembeli atau ditandai sudah dikembalikan.',
    placeholder: 'Id pembayaran, rekber atau pesanan, id pesanan gateway, referensi klaim, e-mail, nama pengguna, nama, barang',
    nothing: 'Tidak ada yang menunggu.',
    for: 'Untuk',
    why: 'Sebab',
    decision: 'Keputusan',
    attention: {
      claimed: 'Transfer diklaim',
      late_claim: 'Diklaim terlambat: rekber atau pesanannya sudah tidak menerimanya',
      amount_mismatch: 'Jumlah dari gateway tidak cocok',
    },
    whereItWent: 'Ke mana dananya (wajib)',
    credit: 'Masukkan ke saldo pembeli',
    confirmCredit: (amount) => `Masukkan ${amount} ke saldo pembeli?`,
    markReturned: 'Tandai sudah dikembalikan',
    confirmReturned: (amount) => `Catat bahwa ${amount} sudah dikembalikan ke pembayar di luar layanan?`,
    rejectNotReceived: 'Tolak (tidak diterima)',
    claimedAt: (when) => `diklaim ${when}`,
    escrowRef: (id) => `rekber ${id}`,
    orderRef: (id) => `pesanan ${id}`,
    gatewayReported: (amount) => `dilaporkan gateway ${amount}`,
  },

  withdrawals: {
    heading: 'Penarikan yang perlu disetujui',
    placeholder: 'Id penarikan atau akun, e-mail, nama pengguna, nama',
    nothing: 'Tidak ada penarikan yang menunggu.',
    who: 'Siapa',
    risk: 'Risiko',
    decision: 'Keputusan',
    confirmApprove: 'Setujui pencairan ini?',
    noteRequired: 'Catatan (wajib)',
  },

  users: {
    heading: 'Pengguna',
    placeholder: 'Id akun, e-mail, nama pengguna atau nama',
    joinedAtLeast: 'Bergabung minimal',
    hoursAgo: 'jam yang lalu',
    newestFirst: 'Akun terbaru tampil lebih dulu.',
    nothing: 'Tidak ada akun yang cocok.',
    account: 'Akun',
    move: 'Tindakan',
    confirmSuspend: 'Bekukan akun ini? Semua sesinya berakhir.',
  },

  orders: {
    heading: 'Pesanan jasa bayar',
    placeholder: 'Id pesanan atau pembeli, e-mail, nama pengguna, nama, barang yang dibeli',
    nothing: 'Tidak ada pesanan yang menunggu.',
    sla: 'Batas SLA',
    move: 'Tindakan',
    order: 'Pesanan',
    confirmPayment: 'Konfirmasi pembayaran',
    startProcessing: 'Mulai proses',
    confirmDeliver: 'Kirim pesanan ini? Uangnya menjadi final.',
    credentialsPlaceholder: 'Kredensial (disegel, hanya ditampilkan ke pembeli)',
    credentials: 'Kredensial',
    deliveryNote: 'Catatan pengiriman',
    deliver: 'Kirim',
    confirmRefund: 'Kembalikan seluruh dana pesanan ini ke saldo pembeli?',
    refund: 'Kembalikan dana',
  },

  kyb: {
    heading: 'Pengajuan KYB yang perlu ditinjau',
    intro:
      'Pengajuan yang sudah dikirim, ruang kerja live lebih dulu, pengajuan terlama lebih dulu, satu halaman setiap kali. Peninjauan memakan 1 sampai 3 hari kerja; buka pengajuan untuk melihat dokumennya dan memutuskan.',
    placeholder: 'Id pengajuan, ruang kerja atau rekanan, nama ruang kerja, rekanan atau nama resmi',
    nothing: 'Tidak ada yang perlu ditinjau.',
    dueBy: 'Tenggat',
    applicant: 'Pemohon',
    whose: 'Jenis pengajuan',
    workspaceApplication: 'Pengajuan ruang kerja',
    notGiven: 'tidak diisi',
    decision: 'Keputusan',
    nothingToDecide: (status) => `Versi ini berstatus ${status}: tidak ada yang perlu diputuskan.`,
    confirmApproveCounterparty: (name) => `Setujui pengajuan ini? ${name} menjadi rekanan terverifikasi.`,
    confirmApproveWorkspace: (name) => `Setujui pengajuan ini? ${name} langsung live.`,
    requestChanges: 'Minta perubahan',
    requestChangesIntro: (next) =>
      `Satu baris untuk setiap perubahan: kolom atau dokumennya, dan apa yang harus dilakukan pemohon. Versi ${next} dibuka sebagai draf yang membawa catatan ini.`,
    fieldPlaceholder: 'Kolom (mis. company.npwp)',
    fieldLabel: (n) => `Kolom ${n}`,
    whatToChange: 'Yang harus diubah',
    noteLabel: (n) => `Catatan ${n}`,
    confirmReject: 'Tolak pengajuan ini? Pemohon melihat alasannya.',
    rejectReason: 'Alasan (dilihat pemohon)',
    removedPerson: 'orang yang sudah dihapus',
    queueLink: 'Antrean KYB',
    applicationHeading: (name, version) => `Pengajuan KYB: ${name}, versi ${version}`,
    counterpartyOf: (workspace) => `Rekanan dari ${workspace}`,
    kybStatus: (status) => `KYB ${status}`,
    company: 'Perusahaan',
    nib: 'NIB',
    npwp: 'NPWP',
    address: 'Alamat',
    industry: 'Bidang usaha',
    monthlyVolume: 'Volume bulanan',
    website: 'Situs web',
    people: 'Pengurus dan pemilik',
    noPeople: 'Belum ada yang dicantumkan.',
    name: 'Nama',
    position: 'Jabatan',
    roles: 'Peran',
    identity: 'Identitas',
    nationality: 'Kewarganegaraan',
    ownership: 'Kepemilikan',
    nik: 'NIK',
    passport: 'Paspor',
    bankAccount: 'Rekening bank',
    holder: 'Pemilik',
    noDocuments: 'Tidak ada dokumen.',
    linksUntil: (when) => `Setiap tautan ditandatangani khusus untuk Anda dan berlaku sampai ${when} UTC; muat ulang halaman untuk tautan baru.`,
    document: 'Dokumen',
    file: 'Berkas',
    added: 'Ditambahkan',
    docTypes: {
      akta_pendirian: 'Akta Pendirian',
      sk_kemenkumham: 'SK Kemenkumham',
      akta_perubahan: 'Akta Perubahan',
      bank_proof: 'Bukti rekening bank',
      ktp: 'KTP',
      passport: 'Paspor',
    },
    earlierChanges: 'Permintaan perubahan pada versi sebelumnya',
    history: 'Riwayat',
    tierOrReason: 'Tingkat risiko / alasan',
    thisPage: '(halaman ini)',
  },

  funding: {
    heading: 'Pendanaan yang perlu dikonfirmasi',
    intro:
      'Tahapan kesepakatan live yang menunggu pendanaan, aktivasi terlama lebih dulu, satu halaman setiap kali. Konfirmasi sebuah tahapan setelah jumlah pendanaannya (jumlah tahapan ditambah bagian biaya ruang kerja) masuk: tahapan menjadi terdanai dan uangnya dibukukan ke buku besar.',
    placeholder: 'Id kesepakatan, tahapan atau ruang kerja, referensi atau judul kesepakatan, tahapan, nama ruang kerja',
    nothing: 'Tidak ada yang perlu dikonfirmasi.',
    expect: 'Pendanaan yang ditunggu',
    confirmArrived: (amount, milestone, reference) => `Konfirmasi bahwa ${amount} sudah masuk untuk tahapan ${milestone} dari ${reference}?`,
    notePlaceholder: 'Catatan (mis. referensi bank)',
  },

  deal: {
    allocation: {
      buyer: 'buyer: ruang kerja membayar biayanya',
      seller: 'seller: rekanan menanggung biayanya',
      split: 'split: dibagi menurut persen',
    },
    override: 'Ubah pembagian biaya',
    cancelledNoOverride: 'Kesepakatan ini dibatalkan: pembagian biayanya tidak dapat diubah.',
    overrideIntro:
      'Atas permintaan kedua pihak (spesifikasi 4.5 aturan 6). Biaya platform tetap; hanya bagian tahapan yang belum didanai yang dihitung ulang. Pembagian yang tidak dapat dicapai tepat oleh bagian-bagian itu ditolak. Alasannya tampil di umpan peristiwa ruang kerja.',
    confirmOverride: (reference) => `Ubah pembagian biaya ${reference}?`,
    allocationLabel: 'Pembagian',
    sharePercent: 'Bagian ruang kerja dalam persen (wajib untuk split; buyer berarti 100, seller 0)',
    overrideButton: 'Ubah',
    payoutsIntro: 'Setiap pencairan menunjukkan tujuan saat dana diteruskan (label, bank, pemilik, nomor tersamar), sebagaimana disimpan pada pencairan itu.',
    noPayouts: 'Belum ada pencairan.',
    settledAt: (when) => `selesai ${when}`,
    approvals: 'Persetujuan',
    noApprovals: 'Belum ada slot persetujuan (slot dibuka saat bukti diajukan).',
    round: 'Putaran',
    slot: 'Slot',
    approver: 'Penyetuju',
    noDocuments: 'Tidak ada dokumen pada tahapannya.',
    type: 'Jenis',
    filedBy: 'Diunggah oleh',
    filed: 'Diunggah',
    visibleTo: 'Terlihat oleh',
    heading: (reference, title) => `Kesepakatan ${reference}: ${title}`,
    sandboxDeal: '(kesepakatan sandbox: bukan uang sungguhan)',
    owner: 'Pemilik',
    rate: 'Tarif',
    minimum: (amount) => `minimal ${amount}`,
    volumeTier: (amount) => `tingkat volume mulai ${amount}`,
    platformFee: 'Biaya platform',
    shares: (workspace, counterparty) => `ruang kerja ${workspace}% · rekanan ${counterparty}%`,
    buyerFeeWorkspace: 'Biaya pembeli (ruang kerja)',
    sellerFeeCounterparty: 'Biaya penjual (rekanan)',
    fundingTotal: 'Total pendanaan',
    payoutTotal: 'Total pencairan',
    frozen: 'Terkunci',
    frozenYes: 'ya (sudah aktif)',
    frozenNo: 'tidak (draf)',
    milestones: 'Tahapan',
    number: 'No.',
    fundingAmount: 'Jumlah pendanaan',
    payoutAmount: 'Jumlah pencairan',
    sharesHead: 'Bagian biaya',
    funded: 'Didanai',
    sharesOpen: 'terbuka',
    sharesFixed: 'tetap',
    noEvents: 'Tidak ada peristiwa.',
  },

  instructions: {
    heading: 'Instruksi pembayaran yang perlu diverifikasi',
    intro: (perPage) =>
      `Rekening tujuan rekanan yang baru, yang diubah, dan semua rekening milik ruang kerja yang baru live: ruang kerja live lebih dulu, lalu sandbox, masing-masing yang terlama menunggu lebih dulu, ${perPage} per halaman. Tampilkan nomor rekening lengkapnya (setiap penampilan dicatat atas nama Anda), periksa dengan ruang kerja di luar layanan (telepon balik ke kontak yang dikenal, pengecekan nama oleh bank), lalu verifikasi apa yang ditampilkan kepada Anda: uang hanya dibayarkan ke instruksi terverifikasi, dan verifikasi menandatangani label, bank, pemilik dan nomor sebagaimana ditampilkan. Jika instruksi berubah sejak itu, verifikasi ditolak. Tolak tujuan yang tidak dapat Anda pastikan: ruang kerja melihat alasan Anda dan dapat mengubahnya (kembali ke sini) atau menghapusnya.`,
    placeholder: 'Id instruksi, ruang kerja atau rekanan, ruang kerja, rekanan, label, pemilik, bank',
    nothing: 'Tidak ada yang perlu diverifikasi.',
    pendingSince: 'Menunggu sejak',
    confirmDecline: (label, bank) => `Tolak ${label} (${bank})? Ruang kerja melihat alasan Anda.`,
    reasonPlaceholder: 'Alasan (dilihat ruang kerja)',
  },

  reveal: {
    back: 'Instruksi pembayaran yang perlu diverifikasi',
    heading: (label) => `Instruksi pembayaran: ${label}`,
    recorded: 'Penampilan ini dicatat di audit staf atas nama Anda.',
    sandboxSigns: 'sandbox: verifikasi hanya berlaku untuk uang sandbox',
    liveSigns: 'live: verifikasi berlaku untuk uang sungguhan',
    confirmVerify: (bank, account, holder, counterparty) =>
      `Verifikasi ${bank} ${account} (${holder}) untuk ${counterparty}? Setelah itu pencairan dapat dikirim ke rekening ini.`,
    notePlaceholder: 'Catatan (cara pemeriksaannya)',
    verify: 'Verifikasi tujuan ini',
    declined: 'Ditolak: ruang kerja dapat mengubahnya (kembali ke antrean) atau menghapusnya.',
    alreadyVerified: 'Sudah diverifikasi.',
  },

  payouts: {
    heading: 'Pencairan yang perlu diselesaikan atau digagalkan',
    intro:
      'Pencairan tahapan yang sudah diteruskan, yang masih dalam antrean atau sedang diproses, live lebih dulu, terlama lebih dulu, satu halaman setiap kali. Tanpa penyedia pencairan, bayar masing-masing lewat transfer bank lalu selesaikan; gagalkan yang ditolak bank, dengan alasannya (dilihat ruang kerja): uangnya kembali ke tahapan untuk diteruskan lagi. Pencairan yang sedang dikirim oleh worker tidak dapat diubah sampai klaimnya habis.',
    placeholder: 'Id pencairan, kesepakatan, tahapan atau ruang kerja, referensi kesepakatan, tahapan, rekanan, ruang kerja, referensi pencairan',
    nothing: 'Tidak ada pencairan yang terbuka.',
    settle: 'Selesaikan',
    fail: 'Gagalkan',
    revealAccount: 'Tampilkan nomor rekening',
    claimedUntil: (when) => `diklaim sampai ${when}`,
    attempts: (n) => `percobaan ${n}`,
    confirmSettle: (amount, destination) => `Selesaikan ${amount} ke ${destination}? Hanya setelah transfernya terkirim.`,
    settleNote: 'Catatan (mis. referensi transfer)',
    confirmFail: (amount) => `Gagalkan pencairan ${amount} ini? Uangnya kembali ke tahapan.`,
    failReason: 'Alasan (wajib; dilihat ruang kerja)',
  },

  rulings: {
    heading: 'Tahapan kesepakatan bersengketa yang perlu diputus',
    intro:
      'Tahapan yang disengketakan ruang kerja, kesepakatan live lebih dulu, sengketa terlama lebih dulu, satu halaman setiap kali. Teruskan: tahapan disetujui lagi dan ruang kerja meneruskannya seperti biasa. Kembalikan: semua yang ditahan, beserta bagian biaya ruang kerja, kembali ke ruang kerja. Bagi: jumlah yang diteruskan (lebih dari bagian biaya rekanan, kurang dari jumlah yang ditahan) tetap untuk rekanan dan sisanya langsung dikembalikan.',
    placeholder: 'Id kesepakatan, tahapan atau ruang kerja, referensi atau judul kesepakatan, tahapan, nama ruang kerja',
    disputed: 'Disengketakan',
    held: (held, refunded) => `ditahan ${held}: ${refunded} dikembalikan oleh putusan sebelumnya`,
    confirmRuling: (milestone, reference) => `Catat putusan ini untuk tahapan ${milestone} dari ${reference}? Pengembalian dan pembagian langsung memindahkan uang.`,
    release: 'Teruskan ke rekanan',
    refund: 'Kembalikan ke ruang kerja',
    split: 'Bagi',
    releaseAmount: (min, max) => `Jumlah yang diteruskan (hanya untuk bagi, ${min} sampai ${max})`,
  },

  records: {
    provider: 'Penyedia',
    gatewayOrderId: 'Id pesanan gateway',
    claim: (reference) => `klaim ${reference}`,
    staffActions: 'Tindakan staf',
    movesAsStaff: 'Tindakan yang dilakukan sebagai staf',
    action: 'Tindakan',
    on: 'Pada',
    confirmSuspend: (email) => `Bekukan ${email}? Semua sesinya langsung berakhir.`,
    email: 'E-mail',
    notVerified: '(belum diverifikasi)',
    username: 'Nama pengguna',
    phone: 'Telepon',
    identityCheck: 'Verifikasi identitas',
    twoStep: 'Masuk dua langkah',
    balance: 'Saldo',
    item: 'Barang',
    asBuyer: 'pembeli',
    asSeller: 'penjual',
    reference: 'Referensi',
    sessions: 'Sesi',
    started: 'Mulai',
    ends: 'Berakhir',
    from: 'Dari',
    state: 'Keadaan',
    ended: (when) => `berakhir ${when}`,
    sessionLive: 'aktif',
    escrowHeading: (item) => `Rekber: ${item}`,
    expires: 'Kedaluwarsa',
    sent: 'Dikirim',
    received: 'Diterima',
    autoRelease: 'Diteruskan otomatis',
    released: 'Diteruskan',
    disputedAt: 'Disengketakan',
    feeOf: (amount) => `biaya ${amount}`,
    source: 'Sumber',
    partnerReference: (reference) => `referensi mitra ${reference}`,
    shipment: 'Pengiriman',
    description: 'Deskripsi',
    cancelReason: 'Alasan pembatalan',
    opened: 'Dibuka',
    outcome: 'Hasil',
    ruleOpen: 'Putuskan sengketa yang terbuka',
    orderHeading: (label) => `Pesanan: ${label}`,
    autoRefunded: '(dikembalikan karena waktunya habis)',
    paidVia: 'Dibayar lewat',
    deliverBy: 'Kirim sebelum',
    delivered: 'Dikirim',
    workspaceHeading: (name) => `Ruang kerja: ${name}`,
    mode: 'Mode',
    platformDefault: 'bawaan platform',
    feeRate: (percent, minimum) => `${percent}%${minimum === null ? '' : `, minimal ${minimum}`}`,
    members: 'Anggota',
    member: 'Anggota',
    removed: (when) => `dikeluarkan ${when}`,
    kybVersions: 'Versi KYB',
    review: 'Tinjau',
    counterparties: 'Rekanan',
    name: 'Nama',
    relationship: 'Hubungan',
    instructions: 'Instruksi pembayaran',
    since: (when) => `sejak ${when}`,
    keys: 'Kunci API',
    scopes: 'Cakupan',
    key: 'Kunci',
    lastUsed: 'Terakhir dipakai',
    revoked: (when) => `dicabut ${when}`,
    active: 'aktif',
    deals: 'Kesepakatan',
  },
};

const TEXT: Record<Lang, ConsoleText> = { en: EN, id: ID };

export const consoleText = (lang: Lang): ConsoleText => TEXT[lang];

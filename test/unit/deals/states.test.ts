/**
 * Milestone moves and the computed deal status (enterprise spec section 3; D7; issue 26),
 * checked against the rules written out here independently of shared/deals/states.ts:
 * 1. `dealStatus` for every mix of 1 to 3 milestones over the 9 statuses (every order), with
 *    the deal cancelled or not and flagged for terms review or not, and fast-check over
 *    deals of up to 20 milestones;
 * 2. the transition table has exactly the edges of section 3 (milestone table; unfinished
 *    sandbox milestones cancelled when the workspace goes live) and D7 (activate; cancel of
 *    the deal while no milestone is funded), and nothing else.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  DEAL_STATUSES,
  MILESTONE_STATUSES,
  MILESTONE_TRANSITIONS,
  canMove,
  dealStatus,
  type DealStatus,
  type MilestoneStatus,
  type MilestoneTransitionName,
} from '../../../shared/deals/states.js';

const ALL: MilestoneStatus[] = ['draft', 'awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved', 'released', 'disputed', 'cancelled'];
const HELD_BY_SPEC: MilestoneStatus[] = ['funded', 'evidence_submitted', 'revision_requested', 'approved'];

/** The deal status rules of section 3, in the order they win. */
function expectedStatus(cancelledDeal: boolean, termsReview: boolean, statuses: MilestoneStatus[]): DealStatus {
  const live = statuses.filter((s) => s !== 'cancelled');
  if (cancelledDeal || live.length === 0) return 'cancelled';
  if (live.includes('disputed')) return 'disputed';
  if (live.every((s) => s === 'released')) return 'completed';
  if (live.includes('released')) return 'in_progress';
  if (live.some((s) => HELD_BY_SPEC.includes(s))) return 'funded';
  if (live.includes('awaiting_funding')) return 'awaiting_funding';
  return termsReview ? 'terms_review' : 'draft';
}

/** Every sequence of `n` statuses (order matters: 9^n of them). */
function sequences(n: number): MilestoneStatus[][] {
  if (n === 0) return [[]];
  return sequences(n - 1).flatMap((s) => ALL.map((x) => [...s, x]));
}

const deal = (cancelled: boolean, termsReview: boolean) => ({ cancelled_at: cancelled ? new Date('2026-12-01T00:00:00Z') : null, terms_review: termsReview });

describe('deal states (spec 3, D7)', () => {
  it('knows the nine milestone statuses and the eight deal statuses of section 3', () => {
    expect([...MILESTONE_STATUSES].sort()).to.deep.equal([...ALL].sort());
    expect([...DEAL_STATUSES].sort()).to.deep.equal(['awaiting_funding', 'cancelled', 'completed', 'disputed', 'draft', 'funded', 'in_progress', 'terms_review']);
  });

  describe('dealStatus', () => {
    it('matches the rules for every mix of 1 to 3 milestones, cancelled deal or not, terms review or not', () => {
      let checked = 0;
      const wrong: string[] = [];
      for (const n of [1, 2, 3]) {
        for (const seq of sequences(n)) {
          for (const cancelled of [false, true]) {
            for (const termsReview of [false, true]) {
              const want = expectedStatus(cancelled, termsReview, seq);
              const got = dealStatus(deal(cancelled, termsReview), seq.map((status) => ({ status })));
              checked += 1;
              if (got !== want) wrong.push(`[${seq.join(', ')}] cancelled=${cancelled} terms_review=${termsReview}: ${got}, want ${want}`);
            }
          }
        }
      }
      expect(checked).to.equal((9 + 81 + 729) * 4);
      expect(wrong.slice(0, 20)).to.deep.equal([]);
    });

    it('matches the rules for random deals of up to 20 milestones, whatever their order', () => {
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...ALL), { minLength: 1, maxLength: 20 }), fc.boolean(), fc.boolean(), (seq, cancelled, termsReview) => {
          const want = expectedStatus(cancelled, termsReview, seq);
          expect(dealStatus(deal(cancelled, termsReview), seq.map((status) => ({ status })))).to.equal(want);
          expect(dealStatus(deal(cancelled, termsReview), [...seq].reverse().map((status) => ({ status })))).to.equal(want);
        }),
        { numRuns: 2000 },
      );
    });

    it('spot checks written out by hand', () => {
      const s = (statuses: MilestoneStatus[], cancelled = false, termsReview = false) => dealStatus(deal(cancelled, termsReview), statuses.map((status) => ({ status })));
      expect(s(['draft', 'draft'])).to.equal('draft');
      expect(s(['draft', 'draft'], false, true)).to.equal('terms_review');
      expect(s(['awaiting_funding', 'draft'], false, true)).to.equal('awaiting_funding');
      expect(s(['awaiting_funding', 'revision_requested'])).to.equal('funded');
      expect(s(['released', 'awaiting_funding'])).to.equal('in_progress');
      expect(s(['released', 'disputed'])).to.equal('disputed');
      expect(s(['released', 'cancelled'])).to.equal('completed');
      expect(s(['cancelled', 'cancelled'])).to.equal('cancelled');
      expect(s(['cancelled', 'cancelled'], false, true)).to.equal('cancelled');
      expect(s(['released', 'released'], true)).to.equal('cancelled');
      expect(s(['disputed', 'disputed'], true)).to.equal('cancelled');
    });
  });

  describe('the milestone transition table', () => {
    /** Every status move the spec allows, `from>to`: section 3's table and workspace rule, D7 and D10's rulings. */
    const SPEC_EDGES = [
      // D7: activate moves every draft milestone to awaiting_funding.
      'draft>awaiting_funding',
      // Section 3: fund (sandbox) or operator confirmation of funds (live).
      'awaiting_funding>funded',
      // submit-evidence.
      'funded>evidence_submitted',
      'revision_requested>evidence_submitted',
      // decide: approve (the last approval of the round); reject or revision.
      'evidence_submitted>approved',
      'evidence_submitted>revision_requested',
      // release.
      'approved>released',
      // dispute.
      'funded>disputed',
      'evidence_submitted>disputed',
      'approved>disputed',
      // Cancelling a deal while no milestone is funded moves its milestones to cancelled.
      'draft>cancelled',
      'awaiting_funding>cancelled',
      // On KYB approval, unfinished milestones of sandbox deals are cancelled (not released, not already cancelled).
      'funded>cancelled',
      'evidence_submitted>cancelled',
      'revision_requested>cancelled',
      'approved>cancelled',
      'disputed>cancelled',
      // D10 resolve-dispute (decision 0019): release or split back to approved (then the normal release), refund to cancelled (disputed>cancelled above).
      'disputed>approved',
    ];

    const tableEdges = (): string[] => {
      const out = new Set<string>();
      for (const move of Object.values(MILESTONE_TRANSITIONS)) for (const from of move.from) out.add(`${from}>${move.to}`);
      return [...out].sort();
    };

    it('has exactly the edges of section 3 and D7, and nothing else', () => {
      expect(tableEdges()).to.deep.equal([...SPEC_EDGES].sort());
    });

    it('never moves a milestone out of released or cancelled, and never back to draft', () => {
      for (const move of Object.values(MILESTONE_TRANSITIONS)) {
        const from: readonly string[] = move.from;
        expect(from).to.not.include('released');
        expect(from).to.not.include('cancelled');
        expect(move.to).to.not.equal('draft');
      }
    });

    it('the named moves the deal routes use have the spec from-states and target', () => {
      const want: Partial<Record<MilestoneTransitionName, [MilestoneStatus[], MilestoneStatus]>> = {
        activate: [['draft'], 'awaiting_funding'],
        fund: [['awaiting_funding'], 'funded'],
        submit_evidence: [['funded', 'revision_requested'], 'evidence_submitted'],
        dispute: [['funded', 'evidence_submitted', 'approved'], 'disputed'],
        cancel: [['draft', 'awaiting_funding'], 'cancelled'],
        sandbox_closed: [['draft', 'awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed'], 'cancelled'],
      };
      for (const [name, [from, to]] of Object.entries(want) as [MilestoneTransitionName, [MilestoneStatus[], MilestoneStatus]][]) {
        expect([...MILESTONE_TRANSITIONS[name].from].sort(), name).to.deep.equal([...from].sort());
        expect(MILESTONE_TRANSITIONS[name].to, name).to.equal(to);
      }
    });

    it('canMove answers from the table for every status and move', () => {
      for (const name of Object.keys(MILESTONE_TRANSITIONS) as MilestoneTransitionName[]) {
        for (const status of ALL) {
          expect(canMove(status, name), `${status} ${name}`).to.equal((MILESTONE_TRANSITIONS[name].from as readonly string[]).includes(status));
        }
      }
    });
  });
});

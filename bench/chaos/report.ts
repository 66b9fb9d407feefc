/** The chaos run's figures, printed (docs/reliability.md records them by hand), and its differences. */
import { fmtNum } from '../lib/format.js';
import { LOG_FILE, PROCESS_LOG_FILE } from './client.js';
import { STALL_LIMIT_S, type Findings } from './verify.js';

/** Prints the figures and every difference; sets exit code 1 when there is one. */
export function printFindings(f: Findings, mails: number, requests: number): void {
  const { counts, exp, waits, diffs, racing } = f;
  const s = (x: number) => `${fmtNum(x)} s`;
  const orders = [...exp.orders.values()];
  console.log('');
  console.log(`chaos: ${requests} requests (${exp.escrows.size} escrows, ${exp.orders.size} payment-service orders, ${exp.withdrawals.size} withdrawals) in ${f.seconds.toFixed(0)} s`);
  console.log(
    `chaos: worker SIGKILLs ${counts.workerKills} (${counts.stalledPayouts.length} of them while the worker ran a payout job), API kills ${counts.apiKills}, Redis restarts ${counts.redisRestarts}, ` +
      `Postgres backends terminated ${counts.terminatedBackends}, ${counts.terminatedMidTx} of them inside a transaction (cut at try ${counts.pgCutAttempts})`,
  );
  console.log(
    `chaos: stalled-job wait: ${s(f.longestWait)} at most (limit ${STALL_LIMIT_S} s); payouts whose worker was killed, kill to taken by another worker: ${f.stallWaits.map((x) => s(x.s)).join(', ') || 'none'} ` +
      `(to paid: ${f.stallWaits.map((x) => s(x.paidS)).join(', ')}); enterprise payouts whose worker was killed, kill to taken: ${f.disbStallWaits.map((x) => s(x.s)).join(', ') || 'none'} ` +
      `(to settled: ${f.disbStallWaits.map((x) => s(x.paidS)).join(', ')}); longest a payout waited to be taken ${s(waits.payout.s)} (an enterprise payout ${s(waits.disbursement.s)}; both held to the limit), ` +
      `a due callback to be processed ${s(waits.callback.s)}; drained ${s(waits.drainS)} after the workload`,
  );
  console.log(
    `chaos: requests whose connection was cut (API copy killed) ${f.cut}, then sent again; 5xx answers to requests whose Postgres connection was cut ${f.dbCut5xx}; ` +
      `other 5xx ${f.fiveXX} (of which 503 ${f.unavailable}); API down windows ${f.cutWindows.length}`,
  );
  console.log(
    `chaos: payment-service orders ${exp.orders.size} (differences ${diffs.orders}; ${orders.filter((o) => o.status === 'delivered').length} delivered, ${orders.filter((o) => o.status === 'refunded').length} refunded)`,
  );
  console.log(
    `chaos: escrows ${exp.escrows.size} (differences ${diffs.escrows}), withdrawals ${exp.withdrawals.size} (differences ${diffs.withdrawals}), users with a balance difference ${diffs.balances}, ` +
      `paid orders ${exp.paidOrders.size} (credited ${f.credited.paid}, doubled ${f.credited.dup}), outbox open ${f.outbox.open} dead ${f.outbox.dead}; jobs failed ${f.jobs.failed} (each with its reason), stuck ${f.jobs.stuck}`,
  );
  console.log(
    `chaos: money at the edges: late manual transfers credited ${f.edgeFigures.lateCredited} (late claims ${exp.lateClaims.size}), short/long payments ${exp.mismatched.size} ` +
      `(credited ${f.edgeFigures.mismatchCredited}, marked returned ${f.edgeFigures.mismatchReturned}), second staff moves accepted ${exp.settledTwice.length}, ` +
      `callbacks sent before their pay answered ${racing.beforeCommit} of ${racing.tried}; payment differences ${diffs.edges}`,
  );
  const e = f.enterprise;
  const statuses = Object.entries(e.byStatus)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  console.log(
    `chaos: enterprise: ${e.deals} deals (${e.moves.cancelledDeals} cancelled), ${e.milestones} milestones (${statuses}); fundings confirmed ${e.moves.fundings}, evidence ${e.moves.evidence}, ` +
      `approvals ${e.moves.approvals} (four-eyes milestones released ${e.fourEyesApproved}, pairs sent at once ${e.run.concurrentPairs}), revisions and rejections ${e.moves.sendBacks}, ` +
      `disputes ${e.moves.disputes} (rulings ${Object.entries(e.moves.rulings).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}), releases ${e.moves.releases} and again ${e.moves.reReleases}; ` +
      `release vs dispute at once ${e.run.race.tried} (release won ${e.run.race.releaseWon}, dispute won ${e.run.race.disputeWon}, both ${e.run.race.both})`,
  );
  console.log(
    `chaos: enterprise payouts ${e.payouts} (failed by staff ${e.payoutsFailed} of ${e.run.staffFails.tried} tried, the rest settled by the payout worker); accounts ` +
      Object.entries(e.accounts)
        .map(([code, x]) => `${code} ${fmtNum(x.ledger)}${x.ledger === x.log ? '' : ` (log ${fmtNum(x.log)})`}`)
        .join(', '),
  );
  console.log(
    `chaos: enterprise differences: milestones ${e.diffs.milestones}, payouts ${e.diffs.disbursements}, ledger shares of milestones ${e.diffs.money}, accounts ${e.diffs.accounts}; ` +
      `answers the state table does not allow ${e.impossible}; flows stopped ${e.flowErrors}`,
  );
  console.log(`chaos: public profiles whose counters differ from a recount ${f.profilesOff}`);
  console.log(`chaos: e-mails received by the SMTP sink ${mails}`);
  console.log(`chaos: request log ${LOG_FILE}; process logs ${PROCESS_LOG_FILE}`);
  if (f.problems.length > 0) {
    for (const p of f.problems) console.error(`chaos: DIFFERENCE: ${p}`);
    process.exitCode = 1;
  } else console.log('chaos: differences found: 0');
}

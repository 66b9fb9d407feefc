/** Whole-rupiah amounts (ARCHITECTURE rule 1): integers only, guarded to be safe. */
export function assertRupiah(amount: number, what = 'amount'): number {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`${what} must be a whole number of rupiah, got ${amount}`);
  return amount;
}

/** Sum of whole-rupiah amounts; throws if the result leaves the safe-integer range. */
export function sumRupiah(amounts: readonly number[]): number {
  let total = 0;
  for (const a of amounts) total = assertRupiah(total + assertRupiah(a), 'sum');
  return total;
}

/** Rows read a page at a time (keyset paging): `page(last)` answers the rows after `last` (the first page with undefined); a short page is the last. */
export async function* keyset<R>(pageSize: number, page: (last: R | undefined) => Promise<R[]>): AsyncGenerator<R> {
  let last: R | undefined;
  for (;;) {
    const rows = await page(last);
    yield* rows;
    if (rows.length < pageSize) return;
    last = rows[rows.length - 1];
  }
}

/**
 * Group commit for writes that many requests make one row at a time (issue 29: the
 * gateway's callbacks). Each caller submits its item and awaits its own result; at most one
 * flush runs at a time, and every item submitted while it runs goes into the next one (up
 * to `max`). So an idle process writes an item at once (no timer, no added wait) and a busy
 * one writes the items that queued behind a flush in one statement and one COMMIT: the
 * busier it is, the bigger the batches. A caller's promise settles only after its flush
 * has committed (or failed), so an answer sent after it is as durable as one sent after a
 * write of its own.
 *
 * With `concurrency` above 1, that many flushes may run at once (batches then form only
 * once every slot is busy), so one slow statement (a row lock it waits for) does not hold
 * up every item behind it.
 *
 * Items with the same `key` never share a flush, nor run in two at once (the later one
 * waits): one statement cannot update a row twice (`ON CONFLICT DO UPDATE`). A failed
 * flush of several items is tried again one item per flush, so a bad item fails only its
 * own caller.
 */
export interface GroupCommitOptions<T> {
  /** Most items per flush. */
  max: number;
  /** Flushes running at once (default 1). */
  concurrency?: number;
  /** Items with equal keys go in different flushes, in the order they came. */
  key?: (item: T) => string;
}

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<T, R> {
  private readonly queue: Waiting<T, R>[] = [];
  private running = 0;
  /** Keys of the items being written (with `key` only). */
  private readonly writing = new Set<string>();

  /** `flush(items)` writes the items in one transaction and answers one result per item, in their order. */
  constructor(
    private readonly flush: (items: readonly T[]) => Promise<R[]>,
    private readonly options: GroupCommitOptions<T>,
  ) {
    if (!Number.isInteger(options.max) || options.max < 1) throw new Error('GroupCommit: max must be a positive integer');
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('GroupCommit: concurrency must be a positive integer');
  }

  /** Queues `item`; resolves with its result once the flush that wrote it has committed. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Items waiting for a flush (not counting those being written). */
  get waiting(): number {
    return this.queue.length;
  }

  /** Starts flushes while a slot is free and an item can go. */
  private pump(): void {
    const slots = this.options.concurrency ?? 1;
    while (this.running < slots && this.queue.length > 0) {
      const batch = this.take();
      // Every waiting item's key is being written: the flush that ends pumps again.
      if (batch.length === 0) return;
      this.running++;
      void this.write(batch).finally(() => {
        this.running--;
        if (this.options.key) for (const w of batch) this.writing.delete(this.options.key(w.item));
        this.pump();
      });
    }
  }

  /** The next flush's items: the oldest first, up to `max`, no two with one key, none with a key being written. */
  private take(): Waiting<T, R>[] {
    const { max, key } = this.options;
    if (!key) return this.queue.splice(0, max);
    const taken: Waiting<T, R>[] = [];
    for (let i = 0; i < this.queue.length && taken.length < max; ) {
      const k = key(this.queue[i]!.item);
      if (this.writing.has(k)) {
        i++;
        continue;
      }
      this.writing.add(k);
      taken.push(...this.queue.splice(i, 1));
    }
    return taken;
  }

  /** Writes a batch; settles every caller's promise and never rejects. */
  private async write(batch: Waiting<T, R>[]): Promise<void> {
    try {
      const results = await this.flush(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`GroupCommit: the flush answered ${results.length} results for ${batch.length} items`);
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      for (const w of batch) await this.write([w]);
    }
  }
}

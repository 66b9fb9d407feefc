/**
 * shared/group-commit.ts: one flush at a time; what arrives while one runs goes in the next
 * (up to max, no two items with one key); every caller gets its own result once its flush
 * is done; a failed flush of several items is tried again item by item.
 */
import { expect } from 'chai';
import { GroupCommit } from '../../../shared/group-commit.js';

interface Item {
  key: string;
  n: number;
}

/** A flush the test finishes by hand: each call is recorded with its items and waits for `finish`. */
class Flushes {
  readonly calls: { items: Item[]; finish: (fail?: (item: Item) => boolean) => void }[] = [];

  readonly flush = (items: readonly Item[]): Promise<string[]> =>
    new Promise((resolve, reject) => {
      this.calls.push({
        items: [...items],
        finish: (fail) => {
          const bad = fail ? items.find(fail) : undefined;
          if (bad) reject(new Error(`bad item ${bad.n}`));
          else resolve(items.map((i) => `done ${i.n}`));
        },
      });
    });

  sizes(): number[] {
    return this.calls.map((c) => c.items.length);
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const item = (n: number, key = `k${n}`): Item => ({ key, n });

describe('GroupCommit', () => {
  it('an item submitted while nothing is being written is written at once, alone', async () => {
    const f = new Flushes();
    const gc = new GroupCommit(f.flush, { max: 10 });
    const one = gc.submit(item(1));
    expect(f.sizes()).to.deep.equal([1]);
    f.calls[0]!.finish();
    expect(await one).to.equal('done 1');
  });

  it('items submitted while a flush runs share the next flush; each caller gets its own result after it', async () => {
    const f = new Flushes();
    const gc = new GroupCommit(f.flush, { max: 10 });
    const first = gc.submit(item(1));
    const rest = [2, 3, 4].map((n) => gc.submit(item(n)));
    let settled = 0;
    for (const p of rest) void p.then(() => settled++);
    expect(gc.waiting).to.equal(3);
    f.calls[0]!.finish();
    expect(await first).to.equal('done 1');
    await tick();
    expect(f.sizes()).to.deep.equal([1, 3]);
    expect(settled, 'nobody is answered before their own flush is done').to.equal(0);
    f.calls[1]!.finish();
    expect(await Promise.all(rest)).to.deep.equal(['done 2', 'done 3', 'done 4']);
  });

  it('a flush takes at most max items, oldest first', async () => {
    const f = new Flushes();
    const gc = new GroupCommit(f.flush, { max: 2 });
    const all = [1, 2, 3, 4, 5, 6].map((n) => gc.submit(item(n)));
    for (let i = 0; i < 4; i++) {
      await tick();
      f.calls[i]!.finish();
    }
    expect(await Promise.all(all)).to.deep.equal([1, 2, 3, 4, 5, 6].map((n) => `done ${n}`));
    expect(f.calls.map((c) => c.items.map((i) => i.n))).to.deep.equal([[1], [2, 3], [4, 5], [6]]);
  });

  it('two items with one key never share a flush: the later one waits for the next, the others go on', async () => {
    const f = new Flushes();
    const gc = new GroupCommit(f.flush, { max: 10, key: (i: Item) => i.key });
    const all = [gc.submit(item(1)), gc.submit(item(2, 'same')), gc.submit(item(3, 'same')), gc.submit(item(4)), gc.submit(item(5, 'same'))];
    for (let i = 0; i < 4; i++) {
      await tick();
      f.calls[i]!.finish();
    }
    await Promise.all(all);
    expect(f.calls.map((c) => c.items.map((i) => i.n))).to.deep.equal([[1], [2, 4], [3], [5]]);
  });

  it('a failed flush of several items is tried again item by item: only the bad item fails its caller', async () => {
    const f = new Flushes();
    const gc = new GroupCommit(f.flush, { max: 10 });
    const first = gc.submit(item(1));
    const rest = [2, 3, 4].map((n) => gc.submit(item(n)).then((r) => r, (err: Error) => err.message));
    f.calls[0]!.finish();
    await first;
    await tick();
    const bad = (i: Item) => i.n === 3;
    f.calls[1]!.finish(bad);
    for (let i = 2; i < 5; i++) {
      await tick();
      f.calls[i]!.finish(bad);
    }
    expect(await Promise.all(rest)).to.deep.equal(['done 2', 'bad item 3', 'done 4']);
    expect(f.sizes()).to.deep.equal([1, 3, 1, 1, 1]);
  });

  it('with concurrency 2, a flush that hangs does not hold up the next item; a key being written waits even for a free slot', async () => {
    const f = new Flushes();
    const gc = new GroupCommit(f.flush, { max: 10, concurrency: 2, key: (i: Item) => i.key });
    const stuck = gc.submit(item(1, 'a'));
    const next = gc.submit(item(2, 'b'));
    expect(f.sizes(), 'two flushes at once').to.deep.equal([1, 1]);
    f.calls[1]!.finish();
    expect(await next).to.equal('done 2');
    const sameKey = gc.submit(item(3, 'a'));
    const other = gc.submit(item(4, 'c'));
    await tick();
    expect(f.calls.map((c) => c.items.map((i) => i.n)), 'item 3 waits for item 1, though a slot is free').to.deep.equal([[1], [2], [4]]);
    f.calls[2]!.finish();
    expect(await other).to.equal('done 4');
    f.calls[0]!.finish();
    expect(await stuck).to.equal('done 1');
    await tick();
    f.calls[3]!.finish();
    expect(await sameKey).to.equal('done 3');
    expect(f.calls.map((c) => c.items.map((i) => i.n))).to.deep.equal([[1], [2], [4], [3]]);
  });

  it('a flush that answers the wrong number of results fails no caller silently', async () => {
    const gc = new GroupCommit<Item, string>(() => Promise.resolve([]), { max: 10 });
    let message = '';
    await gc.submit(item(1)).catch((err: Error) => (message = err.message));
    expect(message).to.match(/answered 0 results for 1 items/);
  });

  it('max and concurrency must be positive integers', () => {
    expect(() => new GroupCommit(() => Promise.resolve([]), { max: 0 })).to.throw(/max/);
    expect(() => new GroupCommit(() => Promise.resolve([]), { max: 1, concurrency: 0 })).to.throw(/concurrency/);
  });
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Joi from 'joi';
import { idempotent } from '../../../api/middleware/idempotency.js';
import { flatten } from '../../../api/middleware/validate.js';
import { canonicalJson, requestHash } from '../../../shared/idempotency.js';

describe('platform: request hashing for idempotency', () => {
  it('hashes equal bodies equally regardless of key order, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).to.equal(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(requestHash({ b: 1, a: 2 })).to.equal(requestHash({ a: 2, b: 1 }));
  });

  it('distinguishes bodies that differ in a value, an array order or a type', () => {
    const base = requestHash({ amount: 100, tags: ['a', 'b'] });
    expect(requestHash({ amount: 101, tags: ['a', 'b'] })).to.not.equal(base);
    expect(requestHash({ amount: 100, tags: ['b', 'a'] })).to.not.equal(base);
    expect(requestHash({ amount: '100', tags: ['a', 'b'] })).to.not.equal(base);
    expect(requestHash({ amount: 100, tags: ['a', 'b'], extra: null })).to.not.equal(base);
  });

  it('treats a missing body like null and drops undefined members', () => {
    expect(requestHash(undefined)).to.equal(requestHash(null));
    expect(requestHash({ a: 1, b: undefined })).to.equal(requestHash({ a: 1 }));
    expect(requestHash({})).to.not.equal(requestHash(null));
  });
});

describe('platform: joi errors in the { formErrors, fieldErrors } shape', () => {
  it('groups messages by dotted field path and puts object-level ones in formErrors', () => {
    const schema = Joi.object({
      name: Joi.string().required(),
      items: Joi.array().items(Joi.object({ qty: Joi.number().min(1) })),
    }).or('a', 'b');
    const { error } = schema.validate(
      { name: 5, items: [{ qty: 0 }] },
      { abortEarly: false, errors: { wrap: { label: false } } },
    );
    const flat = flatten(error!);
    expect(flat.fieldErrors).to.have.keys('name', 'items.0.qty');
    expect(flat.fieldErrors.name).to.deep.equal(['name must be a string']);
    expect(flat.formErrors).to.have.length(1);
  });
});

describe('platform: idempotent({ prepareAdmitting }), the contract of its prepare step', () => {
  type Mw = (ctx: unknown, next: () => Promise<void>) => Promise<void>;
  /** The parts of a keyed POST's context the middleware reads before its prepare step. */
  function keyedCtx() {
    const key = randomUUID();
    return {
      method: 'POST',
      path: '/api/x/1/pay',
      ip: '127.0.0.1',
      request: { body: { a: 1 } },
      state: { principal: { userId: randomUUID() }, log: { error() {}, warn() {} } },
      get: (h: string) => (h === 'Idempotency-Key' ? key : ''),
    };
  }

  it('a step that returns without admitting its key is a programming error, and the work it prepared is discarded', async () => {
    let discarded = false;
    const mw = idempotent({
      prepareAdmitting: () =>
        Promise.resolve(() => {
          discarded = true;
          return Promise.resolve();
        }),
    }) as unknown as Mw;
    let thrown: unknown;
    await mw(keyedCtx(), () => Promise.resolve()).catch((err: unknown) => (thrown = err));
    expect(String(thrown)).to.match(/did not admit the Idempotency-Key/);
    expect(discarded).to.equal(true);
  });

  it('a step given no gate (no key) runs as prepare does', async () => {
    let ran = 0;
    const mw = idempotent({
      prepareAdmitting: (_ctx, gate) => {
        expect(gate).to.equal(undefined);
        ran += 1;
        return Promise.resolve(undefined);
      },
    }) as unknown as Mw;
    const ctx = { ...keyedCtx(), get: () => '', status: 200 };
    await mw(ctx, () => Promise.resolve());
    expect(ran).to.equal(1);
  });

  it('refuses to be built with both prepare and prepareAdmitting', () => {
    const step = () => Promise.resolve(undefined);
    expect(() => idempotent({ prepare: step, prepareAdmitting: step })).to.throw(/not both/);
  });
});

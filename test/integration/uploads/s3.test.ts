/**
 * The S3-compatible store against a real S3-protocol server on loopback (s3rver, random
 * port, temporary directory), not a mock: the storage contract, then a whole upload read
 * back through its signed link and purged, with UPLOAD_STORAGE=s3 semantics.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import S3rver from 's3rver';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { purgeUnbound } from '../../../shared/uploads/service.js';
import { createStorage, StorageError } from '../../../shared/uploads/storage/index.js';
import { S3Storage } from '../../../shared/uploads/storage/s3.js';
import { config } from '../../../shared/config.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { api } from '../../helpers/app.js';
import * as H from '../../helpers/hostile-files.js';
import { createUser } from '../../factories/users.js';
import { bearer, pathOf, postFile, startUploads, type Harness } from './support.js';

describe('uploads: S3-compatible storage (s3rver on loopback)', function () {
  this.timeout(60_000);
  let server: S3rver;
  let dir: string;
  let store: S3Storage;
  let endpoint: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 's3rver-'));
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'escrow-uploads' }] });
    const address = await server.run();
    endpoint = `http://127.0.0.1:${address.port}`;
    store = createStorage({
      ...config.uploads,
      driver: 's3',
      s3: { endpoint, region: 'us-east-1', bucket: 'escrow-uploads', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true },
    }) as S3Storage;
    expect(store).to.be.instanceOf(S3Storage);
  });
  after(async () => {
    store.destroy();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('put, get, list, delete (absent keys: null and no error); keys are ours only', async () => {
    const bytes = Buffer.from('hello s3');
    await store.put('files/a.jpg', bytes);
    expect(await store.get('files/a.jpg')).to.deep.equal(bytes);
    expect(await store.get('files/missing.jpg')).to.equal(null);
    const listed = await store.list('files/');
    expect(listed.map((o) => o.key)).to.include('files/a.jpg');
    expect(listed.find((o) => o.key === 'files/a.jpg')!.modifiedMs).to.be.a('number').above(0);
    await store.delete('files/a.jpg');
    await store.delete('files/a.jpg');
    expect(await store.get('files/a.jpg')).to.equal(null);
    for (const key of ['../x', 'files/../../x', 'other/x', 'files/a b']) {
      let err: unknown;
      try {
        await store.put(key, bytes);
      } catch (e) {
        err = e;
      }
      expect(err, key).to.be.instanceOf(StorageError);
    }
  });

  it('a bucket that does not exist: StorageError (the API answers 500 STORAGE_FAILED)', async () => {
    const missing = createStorage({ ...config.uploads, driver: 's3', s3: { endpoint, region: 'us-east-1', bucket: 'nope', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true } });
    let err: unknown;
    try {
      await missing.put('files/x.jpg', Buffer.from('x'));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(StorageError);
  });

  describe('through the API', () => {
    let harness: Harness;
    before(async () => {
      harness = await startUploads(store);
    });
    after(async () => {
      await harness.stop();
    });

    it('an upload is quarantined, cleaned and stored in the bucket, read back by its link, then purged after a day unbound', async () => {
      const client = api();
      const { user } = await createUser();
      const key = await issueKey(user.id);
      const res = await postFile(client, key, 'escrow', { bytes: await H.jpegWithGps(), filename: 'bukti.jpg', contentType: 'image/jpeg' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const inBucket = await store.get(`files/${res.body.upload_id as string}`);
      expect(inBucket).to.not.equal(null);
      expect(createHash('sha256').update(inBucket!).digest('hex')).to.equal(res.body.sha256);
      expect((await store.list('quarantine/')).length).to.equal(0);
      const file = await client.get(pathOf(res.body.url as string)).set(...bearer(key));
      expect(file.status).to.equal(200);
      expect(Number(file.headers['content-length'])).to.equal(res.body.size);
      clock.advance(24 * 3600_000 + 1000);
      const purged = await purgeUnbound();
      expect(purged.rows).to.equal(1);
      expect(await store.get(`files/${res.body.upload_id as string}`)).to.equal(null);
      expect(await db('uploads').count('* as n').first()).to.deep.include({ n: 0 });
    });
  });
});

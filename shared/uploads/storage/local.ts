/** The local filesystem store under UPLOAD_DIR (files written atomically: temp file, then rename). */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assertKey, StorageError, type Storage, type StoredObject } from './types.js';

const isMissing = (err: unknown) => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ENOENT';

export class LocalStorage implements Storage {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    assertKey(key);
    return join(this.root, key);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const target = this.path(key);
    const temp = `${target}.${randomUUID()}.part`;
    try {
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeFile(temp, bytes, { mode: 0o600 });
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw new StorageError(`could not write ${key}`, { cause: err });
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (err) {
      if (isMissing(err)) return null;
      throw new StorageError(`could not read ${key}`, { cause: err });
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await rm(this.path(key), { force: true });
    } catch (err) {
      throw new StorageError(`could not delete ${key}`, { cause: err });
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const dir = join(this.root, prefix);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if (isMissing(err)) return [];
      throw new StorageError(`could not list ${prefix}`, { cause: err });
    }
    const out: StoredObject[] = [];
    for (const name of names) {
      if (name.endsWith('.part')) continue;
      const info = await stat(join(dir, name)).catch(() => null);
      if (info?.isFile()) out.push({ key: `${prefix}${name}`, modifiedMs: info.mtimeMs });
    }
    return out;
  }
}

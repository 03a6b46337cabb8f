// Where a drive's encrypted chunks live: content-addressed files under the data directory
// (`drive/<drive>/<id[0..2]>/<id>`), or the process's memory for a `:memory:` relay. A chunk is
// written to a temporary file, fsynced, then hard-linked to its name: the link fails when the name
// exists, so a chunk is created once and its stored bytes never change (ra.drive.chunk-upload),
// and a crash leaves either the whole chunk or none.
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export interface ChunkStore {
  /** 'stored' when these bytes are new, 'exists' when the id was already stored. */
  put(drive: string, id: string, bytes: Uint8Array): 'stored' | 'exists';
  get(drive: string, id: string): Uint8Array | undefined;
}

export class FileChunks implements ChunkStore {
  constructor(readonly root: string) {}

  #path(drive: string, id: string): { dir: string; file: string } {
    const dir = join(this.root, drive, id.slice(0, 2));
    return { dir, file: join(dir, id) };
  }

  put(drive: string, id: string, bytes: Uint8Array): 'stored' | 'exists' {
    const { dir, file } = this.#path(drive, id);
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `.${id}.${randomBytes(6).toString('hex')}`);
    const fd = openSync(tmp, 'wx');
    try {
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, file);
      syncDir(dir);
      return 'stored';
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
      throw error;
    } finally {
      rmSync(tmp, { force: true });
    }
  }

  get(drive: string, id: string): Uint8Array | undefined {
    try {
      return readFileSync(this.#path(drive, id).file);
    } catch {
      return undefined;
    }
  }
}

export class MemoryChunks implements ChunkStore {
  readonly #chunks = new Map<string, Uint8Array>();

  put(drive: string, id: string, bytes: Uint8Array): 'stored' | 'exists' {
    const key = `${drive}/${id}`;
    if (this.#chunks.has(key)) return 'exists';
    this.#chunks.set(key, new Uint8Array(bytes));
    return 'stored';
  }

  get(drive: string, id: string): Uint8Array | undefined {
    return this.#chunks.get(`${drive}/${id}`);
  }
}

/** The new name survives a crash only once its directory is synced. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

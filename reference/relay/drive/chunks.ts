// Where a drive's encrypted chunks live: content-addressed files under the data directory
// (`drive/<drive>/<id>`), or the process's memory for a `:memory:` relay. The caller checked the
// bytes hash to the id, and records the chunk (drive_chunks) only after put() resolves, once its
// data and its name are both fsynced: a chunk is readable only through that record, so a crash
// mid-write leaves a file nothing reads, replaced by the next upload of the id. Stored bytes never
// change (ra.drive.chunk-upload): a replacement carries the same verified bytes. The file work
// runs in libuv's thread pool, so concurrent uploads overlap their fsyncs.
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export interface ChunkStore {
  /** 'stored' when these bytes are new, 'exists' when the id was already stored. */
  put(drive: string, id: string, bytes: Uint8Array): Promise<'stored' | 'exists'>;
  get(drive: string, id: string): Promise<Uint8Array | undefined>;
}

export class FileChunks implements ChunkStore {
  /** One directory per drive, so concurrent uploads share its fsyncs (see DirSync). */
  readonly #dirs = new DirSync();
  /** Directories known to exist (a drive's is made once). */
  readonly #made = new Set<string>();

  constructor(readonly root: string) {}

  #path(drive: string, id: string): { dir: string; file: string } {
    const dir = join(this.root, drive);
    return { dir, file: join(dir, id) };
  }

  async put(drive: string, id: string, bytes: Uint8Array): Promise<'stored' | 'exists'> {
    const { dir, file } = this.#path(drive, id);
    if (!this.#made.has(dir)) {
      await mkdir(dir, { recursive: true });
      this.#made.add(dir);
    }
    let fh;
    try {
      fh = await open(file, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return this.#replace(dir, file, bytes);
    }
    try {
      await fh.writeFile(bytes);
      // The data and the new name made durable at once: both before the caller records the chunk.
      await Promise.all([fh.sync(), this.#dirs.sync(dir)]);
    } finally {
      await fh.close();
    }
    return 'stored';
  }

  /**
   * A file already bears the name: a concurrent upload of the same bytes, or one a crash cut short
   * before it was recorded. The verified bytes replace it atomically; identical bytes when it was
   * whole, and a file only the caller's record makes readable.
   */
  async #replace(dir: string, file: string, bytes: Uint8Array): Promise<'exists'> {
    const tmp = join(dir, `.${randomBytes(8).toString('hex')}`);
    try {
      const fh = await open(tmp, 'wx');
      try {
        await fh.writeFile(bytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, file);
      await this.#dirs.sync(dir);
    } finally {
      await rm(tmp, { force: true });
    }
    return 'exists';
  }

  async get(drive: string, id: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.#path(drive, id).file);
    } catch {
      return undefined;
    }
  }
}

export class MemoryChunks implements ChunkStore {
  readonly #chunks = new Map<string, Uint8Array>();

  put(drive: string, id: string, bytes: Uint8Array): Promise<'stored' | 'exists'> {
    const key = `${drive}/${id}`;
    if (this.#chunks.has(key)) return Promise.resolve('exists');
    this.#chunks.set(key, new Uint8Array(bytes));
    return Promise.resolve('stored');
  }

  get(drive: string, id: string): Promise<Uint8Array | undefined> {
    return Promise.resolve(this.#chunks.get(`${drive}/${id}`));
  }
}

/**
 * A new name survives a crash only once its directory is synced. Callers that linked a name wait
 * for an fsync that starts after their link: one in flight when they ask may have missed it, so
 * they share the next one, and every caller arriving meanwhile shares it too.
 */
class DirSync {
  readonly #dirs = new Map<string, { running: Promise<void>; next?: Promise<void> }>();

  sync(dir: string): Promise<void> {
    const at = this.#dirs.get(dir);
    if (!at) return this.#start(dir);
    at.next ??= at.running.then(
      () => this.#start(dir),
      () => this.#start(dir),
    );
    return at.next;
  }

  #start(dir: string): Promise<void> {
    const running = fsyncDir(dir).finally(() => {
      const at = this.#dirs.get(dir);
      if (at?.running !== running) return;
      if (at.next) this.#dirs.set(dir, { running: at.next });
      else this.#dirs.delete(dir);
    });
    this.#dirs.set(dir, { running });
    return running;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

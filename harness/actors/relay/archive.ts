// An identity's export as the relay client reads it: a gzip tar archive, its files by path.
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { Parser } from 'tar';

/** The files of a gzip tar archive (an export), by path, as text. */
export async function archive(body: Uint8Array): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      onReadEntry: (entry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => void files.set(entry.path, Buffer.concat(chunks).toString('utf8')));
      },
    });
    Readable.from([body]).pipe(createGunzip()).on('error', reject).pipe(parser).on('finish', resolve).on('error', reject);
  });
  return files;
}

// Shared by the generators: write outputs, or (--check) compare them with what is committed.
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Output {
  path: string;
  content: string;
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Writes every output under `folder` (a folder, or one file) and removes files there that no
 * output produces; with `check`, writes nothing and returns 1 when anything would change. */
export function writeOrCheck(outputs: Output[], check: boolean, folder: string, command: string): number {
  const wanted = new Map(outputs.map((o) => [join(root, o.path), o.content]));
  const stale: string[] = [];
  for (const [file, content] of wanted) {
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (current === content) continue;
    stale.push(`${current === undefined ? 'missing' : 'stale'}: ${relative(root, file)}`);
    if (!check) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
  }
  for (const file of listFiles(join(root, folder))) {
    if (wanted.has(file)) continue;
    stale.push(`extra: ${relative(root, file)}`);
    if (!check) rmSync(file);
  }
  const label = /\.[a-z]+$/.test(folder) ? folder : `${folder}/`;
  if (check) {
    if (stale.length > 0) {
      process.stderr.write(`${label} is not fresh; run \`${command}\` and commit:\n  ${stale.join('\n  ')}\n`);
      return 1;
    }
    process.stdout.write(`${label} is fresh (${outputs.length} files)\n`);
    return 0;
  }
  process.stdout.write(`${label}: ${outputs.length} files, ${stale.length} written or removed\n`);
  return 0;
}

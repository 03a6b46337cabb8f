// bin/bundled.js, as both bins use it: a project whose entry is run from a bundle of its sources,
// made again when a source changes, each module keeping its own import.meta.url.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Where a project's bundle of src/main.ts goes (node_modules is the real one, shared). */
const bundleOf = (dir: string) => join(root, 'node_modules/.cache/svc-conformance', `src-main-ts-${createHash('sha256').update(`${dir}/`).digest('hex').slice(0, 12)}`);
const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A throwaway ESM project: bin/bundled.js, node_modules (esbuild, tsx) and src/ with `files`. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bundled-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'src'));
  cpSync(join(root, 'bin/bundled.js'), join(dir, 'bin/bundled.js'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'src', name), text);
  made.push(dir, bundleOf(dir));
  return dir;
}

const run = (dir: string, env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--input-type=module', '-e', `await (await import(${JSON.stringify(pathToFileURL(join(dir, 'bin/bundled.js')).href)})).runBundled('src/main.ts')`], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });

describe('bin/bundled.js', () => {
  const main = "import { value } from './value.ts';\nconst n: number = value;\nconsole.log(n, import.meta.url);\n";

  it('runs the entry from a bundle, each module with its own import.meta.url, and bundles again when a source changes', () => {
    const dir = project({ 'main.ts': main, 'value.ts': 'export const value = 1;\n' });
    const first = run(dir);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(`1 ${pathToFileURL(join(dir, 'src/main.ts')).href}\n`);
    expect(readdirSync(bundleOf(dir))).toEqual(expect.arrayContaining(['entry.mjs', 'inputs.json']));
    writeFileSync(join(dir, 'src/value.ts'), 'export const value = 22;\n');
    expect(run(dir).stdout).toBe(`22 ${pathToFileURL(join(dir, 'src/main.ts')).href}\n`);
  });

  it('runs the sources through tsx with SVC_NO_BUNDLE=1', () => {
    const dir = project({ 'main.ts': main, 'value.ts': 'export const value = 3;\n' });
    const r = run(dir, { SVC_NO_BUNDLE: '1' });
    expect(r.stdout).toBe(`3 ${pathToFileURL(join(dir, 'src/main.ts')).href}\n`);
    expect(existsSync(bundleOf(dir))).toBe(false);
  });
});

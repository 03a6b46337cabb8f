// The CLI as users run it: through the bin shim, in its own process, with real signals.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin/svc-conformance.js');

describe('bin/svc-conformance.js', () => {
  it('runs the TypeScript CLI and exits with its code', () => {
    const version = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const bad = spawnSync(bin, ['vectors', '--report', 'xml=foo'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--report expects');
  });

  it('prints the generated rule catalogue', () => {
    const rules = spawnSync(bin, ['rules', '--doc', '1'], { encoding: 'utf8' });
    expect(rules.status).toBe(0);
    expect(rules.stdout).toMatch(/^ns\.flow\.audience-own-origin +MUST +doc 1 /m);
    expect(rules.stdout).toMatch(/^\d+ rules\n$/m);
  });

  it('on SIGINT stops the run, writes the report marked interrupted and exits 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-sigint-'));
    const report = join(dir, 'run.json');
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/harness/fixtures/hanging-run.ts'), 'vectors', '--report', `json=${report}`], { cwd: root });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    const json = JSON.parse(await readFile(report, 'utf8'));
    expect(json.summary).toMatchObject({ interrupted: true, passed: 1, skipped: 1 });
    expect(stdout).toMatch(/^1 passed, 0 failed, 1 skipped$/m);
  });
});

// The vector run as users start it: the CLI against the project's vectors and the interop set,
// with reports written; and a deliberately broken verifier failing with the rule it broke.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../harness/cli.ts';
import { vectorSuite } from '../../harness/suites/vectors/index.ts';
import { protocolCore } from '../../harness/suites/vectors/core.ts';
import { createVerifier } from '../../protocol/signin/verifier.ts';

const INTEROP = join(import.meta.dirname, '../../../shared/interop/poweur');

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

async function run(args: string[], deps = {}) {
  const out = capture();
  const err = capture();
  const code = await main(['node', 'svc-conformance', ...args], { stdout: out.stream as never, stderr: err.stream as never }, deps);
  return { code, stdout: out.text(), stderr: err.text() };
}

describe('svc-conformance vectors', () => {
  it('passes every interop vector with --service-name poweur, writing JSON and JUnit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-vectors-'));
    const r = await run(['vectors', '--service-name', 'poweur', '--dir', INTEROP, '--runs', '20', '--seed', '7', '--report', `json=${dir}/r.json`, '--report', `junit=${dir}/r.xml`]);
    expect(r.stdout).toMatch(/^\d+ passed, 0 failed, 0 skipped$/m);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(`${dir}/r.json`, 'utf8'));
    expect(report.summary.failed).toBe(0);
    const sources = new Set(report.results.map((x: { id: string }) => x.id.split('#')[0]));
    const drive = ['drive-chunks', 'drive-manifests', 'drive-names', 'drive-records', 'drive-seals', 'drive-shares', 'group-keys', 'groups', 'pow', 'pow-clamp'];
    for (const f of ['signin', 'signin-reference', 'id-input', 'names', 'canonical', 'documents', 'fingerprints', 'pairing', 'encryption', 'profiles', ...drive]) {
      expect(sources).toContain(`vectors/poweur/${f}.json`);
    }
    expect(readFileSync(`${dir}/r.xml`, 'utf8')).toContain('<testsuites');
  });

  it('passes the project vectors under the default name', async () => {
    const r = await run(['vectors', '--runs', '20', '--seed', '7']);
    expect(r.stdout).toMatch(/^\d+ passed, 0 failed, 0 skipped$/m);
    expect(r.code).toBe(0);
  });

  it('fails the interop set under the wrong service name', async () => {
    const r = await run(['vectors', '--dir', INTEROP, '--runs', '5', '--check', 'signin.json']);
    expect(r.code).toBe(1);
  });

  it('catches a verifier that skips the audience rule, naming rule 2', async () => {
    const broken: typeof createVerifier = (options) => {
      const real = createVerifier(options);
      // Skips rule 2 by rewriting the audience to the verifier's own origin first.
      return (response) => real(response && typeof response === 'object' ? { ...response, audience: options.origin } : response);
    };
    const dir = mkdtempSync(join(tmpdir(), 'svc-broken-'));
    const r = await run(['vectors', '--service-name', 'poweur', '--dir', INTEROP, '--runs', '5', '--seed', '1', '--report', `json=${dir}/r.json`], {
      vectorSuite: (o: { dirs: string[]; serviceName: string }) => vectorSuite({ ...o, core: { ...protocolCore, createVerifier: broken } }),
    });
    expect(r.code).toBe(1);
    const report = JSON.parse(readFileSync(`${dir}/r.json`, 'utf8'));
    const failed = report.results.filter((x: { status: string }) => x.status === 'failed');
    const audience = failed.find((x: { id: string }) => x.id.endsWith('signin.json#wrong-audience'));
    expect(audience.rules).toContain('ns.verify.2');
    expect(audience.detail).toMatch(/rule 2/);
  });

  it('catches a drive core that skips NFC and one that accepts any manifest, naming the drive rules', async () => {
    const drive = {
      ...protocolCore.drive,
      normalizeName: (name: string) => name,
      nameHash: (...[p, k, name]: Parameters<typeof protocolCore.drive.nameHash>) => protocolCore.drive.nameHash(p, k, `${name}\u200b`),
      manifestProblems: () => [],
    };
    const failures = async (args: string[]) => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-broken-drive-'));
      const r = await run(['vectors', ...args, '--runs', '2', '--report', `json=${dir}/r.json`], {
        vectorSuite: (o: { dirs: string[]; serviceName: string }) => vectorSuite({ ...o, core: { ...protocolCore, drive } }),
      });
      expect(r.code).toBe(1);
      return JSON.parse(readFileSync(`${dir}/r.json`, 'utf8')).results.filter((x: { status: string }) => x.status === 'failed') as { id: string; rules: string[] }[];
    };
    const interop = await failures(['--service-name', 'poweur', '--dir', INTEROP]);
    const names = interop.filter((x) => x.id.startsWith('vectors/poweur/drive-names.json#'));
    expect(names).toHaveLength(5);
    expect(names.every((x) => x.rules.includes('ra.drive.name-hash'))).toBe(true);
    const own = await failures([]);
    expect(own.find((x) => x.id.endsWith('drive-manifests.json#manifest:replace-with-a-name'))?.rules).toContain('ra.drive.manifest-shape');
  });
});

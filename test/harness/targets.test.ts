// The targets file and the `run`/`init` commands around it: the example `init` writes is valid,
// bad files are refused with the schema's words, flags override the file, and a run against an
// authority serving another service name stops with exit 2 and says why.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../harness/cli.ts';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { parseTargets } from '../../harness/targets/file.ts';
import { exampleTargets } from '../../harness/targets/example.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { io } from './fakes.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-targets-'));
});

describe('the targets file', () => {
  it('accepts the commented example init writes', () => {
    const t = parseTargets(exampleTargets());
    expect(t).toMatchObject({ service_name: 'svc', authority: 'http://127.0.88.1:8055', rp: { origin: 'https://rp.example.test', start_url: 'https://rp.example.test/test/start', profile: false } });
  });

  it('refuses what the schema does not allow, naming the place', () => {
    expect(() => parseTargets('{"rp": {"origin": "https://rp.example.test/path"}}', 't.json')).toThrow(
      /t\.json does not follow spec\/harness\/targets\.schema\.json:\n {2}\/rp\/origin must match pattern/,
    );
    expect(() => parseTargets('{"rp": {"origin": "https://rp.test", "start": "x"}}', 't.json')).toThrow(/must NOT have unevaluated properties \(start\)/);
    expect(() => parseTargets('{"mystery": {}}', 't.json')).toThrow(/must NOT have additional properties \(mystery\)/);
    expect(() => parseTargets('{"bridge": {}}', 't.json')).toThrow(/\/bridge must have required property 'issuer'/);
    expect(() => parseTargets('{\n "rp": {\n', 't.json')).toThrow(/^t\.json:3: not valid JSON/);
  });
});

describe('svc-conformance init', () => {
  it('writes the example, and will not overwrite without --force', async () => {
    const file = join(dir, 'targets.json');
    const first = io();
    expect(await main(['node', 'svc-conformance', 'init', file], first)).toBe(0);
    expect(first.stdout.text).toContain(`svc-conformance run --targets ${file}`);
    expect(await readFile(file, 'utf8')).toBe(exampleTargets());
    const again = io();
    expect(await main(['node', 'svc-conformance', 'init', file], again)).toBe(2);
    expect(again.stderr.text).toContain('exists: choose another name or pass --force');
    expect(await main(['node', 'svc-conformance', 'init', file, '--force'], io())).toBe(0);
  });
});

describe('svc-conformance run configuration', () => {
  let authority: Authority;
  beforeAll(async () => {
    authority = await startAuthority({ profile: profileFor('poweur') });
  });
  afterAll(async () => {
    await authority?.close();
  });

  it('exits 2 with a clear message when nothing describes a target', async () => {
    const streams = io();
    expect(await main(['node', 'svc-conformance', 'run'], streams)).toBe(2);
    expect(streams.stderr.text).toContain('nothing to test: describe the implementation with --targets FILE');
  });

  it('exits 2 when the authority serves another service name than the run tests', async () => {
    const file = join(dir, 'svc.json');
    await writeFile(file, JSON.stringify({ authority: authority.adminUrl, rp: { origin: 'http://127.0.0.1:9' } }));
    const streams = io();
    expect(await main(['node', 'svc-conformance', 'run', '--targets', file], streams)).toBe(2);
    expect(streams.stderr.text).toContain(`the test authority at ${authority.adminUrl} serves the service name "poweur", but the run tests "svc"`);
    expect(streams.stderr.text).toContain('--service-name poweur');
  });

  it('refuses reference-only flags without --reference and rp flags without an RP', async () => {
    const a = io();
    expect(await main(['node', 'svc-conformance', 'run', '--rp', 'http://127.0.0.1:9', '--nonce-store', 'memory'], a)).toBe(2);
    expect(a.stderr.text).toContain('--nonce-store configure the reference: use them with --reference');
    const b = io();
    expect(await main(['node', 'svc-conformance', 'run', '--rp-start', 'http://127.0.0.1:9/start'], b)).toBe(2);
    expect(b.stderr.text).toContain('give its origin with --rp ORIGIN');
    const c = io();
    expect(await main(['node', 'svc-conformance', 'run', '--suite', 'rp'], c)).toBe(2);
    expect(c.stderr.text).toContain('run --suite rp needs its target');
  });
});

// `svc-reference rp` as a user runs it: child processes, one listening line, real signals, two
// processes sharing one data dir (one RP), resolution through the test authority's DNS and HTTPS.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { defaultProfile } from '../../protocol/common/profile.ts';
import { approve, Browser, deliver, poll, start } from './helpers.ts';
import { bin, spawnRp, type RpProcess } from './processes.ts';

let authority: Authority;
const running: RpProcess[] = [];

beforeAll(async () => {
  authority = await startAuthority({ profile: defaultProfile });
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  await authority?.close();
});

async function rp(args: string[]): Promise<RpProcess> {
  const p = await spawnRp(['--dns-server', authority.dnsServer, '--ca', authority.caFile, ...args]);
  running.push(p);
  return p;
}

describe('svc-reference rp (child processes)', () => {
  it('prints help and refuses bad flags with exit 2', () => {
    const help = spawnSync(process.execPath, [bin, 'rp', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const flag of ['--port', '--origin', '--data-dir', '--nonce-store', '--dns-server', '--ca', '--signer-url', '--service-name', '--resolver-timeout']) expect(help.stdout).toContain(flag);
    const bad = spawnSync(process.execPath, [bin, 'rp', '--nonce-store', 'mongo://x'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--nonce-store');
    // ns.request.audience-http-dev: an http audience only on a development host.
    const http = spawnSync(process.execPath, [bin, 'rp', '--origin', 'http://rp.example.net'], { encoding: 'utf8' });
    expect(http.status).toBe(2);
    expect(http.stderr).toContain('http only on a development host');
  });

  it('prints one listening line, resolves through the authority, and closes on SIGTERM with exit 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-rp-'));
    const p = await rp(['--data-dir', dir]);
    expect(p.origin).toBe(p.url);
    const { identity, seed } = await authority.newIdentity();
    const b = new Browser();
    const { result, request } = await start(b, p.url);
    const r = await deliver(p.url, '/svc/response', approve(request, defaultProfile, { identity, seed }), result.match_code);
    expect(r.status, r.text).toBe(200);
    expect((await poll(b, p.url, result.poll_secret)).json).toEqual({ status: 'completed', identity });
    expect(await p.stop('SIGTERM')).toBe(0);
  });

  it('two processes with one data dir form one RP: start on A, deliver on B, poll on A; a replay on either is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-rp-'));
    const origin = 'http://rp.localhost:8080';
    const [a, b] = await Promise.all([rp(['--data-dir', dir, '--origin', origin]), rp(['--data-dir', dir, '--origin', origin])]);
    expect(a.origin).toBe(origin);
    const { identity, seed } = await authority.newIdentity();
    const browser = new Browser();
    const { result, request } = await start(browser, a.url);
    expect(request.audience).toBe(origin);
    const approval = approve(request, defaultProfile, { identity, seed });
    const replies = await Promise.all([
      deliver(b.url, '/svc/response', approval, result.match_code),
      deliver(a.url, '/svc/response', approval, result.match_code),
      deliver(b.url, '/svc/response', approval, result.match_code),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect((await poll(browser, a.url, result.poll_secret)).json).toEqual({ status: 'completed', identity });
    // The session is shared as well: process B knows the browser is signed in.
    expect((await browser.send(`${b.url}/`)).text).toContain(identity);
  });

  it('--workers 2: one listening line, one port, one RP (a replay on any worker is refused), SIGTERM stops every worker', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-rp-'));
    const p = await rp(['--data-dir', dir, '--workers', '2', '--quiet']);
    const { identity, seed } = await authority.newIdentity();
    const browser = new Browser();
    const { result, request } = await start(browser, p.url);
    const approval = approve(request, defaultProfile, { identity, seed });
    // Separate connections, so the primary hands them to both workers.
    const replies = await Promise.all(Array.from({ length: 6 }, () => deliver(p.url, '/svc/response', approval, result.match_code)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect((await poll(browser, p.url, result.poll_secret)).json).toEqual({ status: 'completed', identity });
    const workers = childPids(p.child.pid!);
    expect(workers.length).toBeGreaterThanOrEqual(2);
    expect(await p.stop('SIGTERM')).toBe(0);
    expect(workers.filter(alive)).toEqual([]);
  });

  it('--workers N refuses stores the workers cannot share (exit 2)', () => {
    for (const extra of [
      ['--data-dir', ':memory:'],
      ['--nonce-store', 'memory'],
    ]) {
      const r = spawnSync(process.execPath, [bin, 'rp', '--port', '0', '--workers', '2', ...extra], { encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('--workers 2 needs stores the workers share');
    }
  });

  it('a key mismatch at the authority fails closed (401, rule 6)', async () => {
    const p = await rp(['--data-dir', ':memory:']);
    const { identity, seed } = await authority.newIdentity();
    await authority.fault(identity, { dnsKey: true });
    const { request } = await start(new Browser(), p.url);
    const r = await deliver(p.url, '/svc/response', approve(request, defaultProfile, { identity, seed }));
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ error: 'key_mismatch', rule: 'ns.verify.6' });
  });
});

/** Node processes whose parent is `pid` (Linux /proc): the cluster workers. */
function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((c) => {
      try {
        const stat = readFileSync(`/proc/${c}/stat`, 'utf8');
        return stat.includes('(node)') && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// The offer to visitors without an ID, in headless Chromium with scripting on, against a reference
// relay as the launcher: the name is checked as typed from the browser (the bridge never sees it),
// creation opens the launcher in a new tab, the sign-in tab tells the bridge it is waiting, and
// once the name is registered at the relay a focus re-check fills in the ID field. With scripting
// off the form still opens the launcher. No content-policy violation or console error.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser as Chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../harness/cli.ts';
import { newPkce } from '../../harness/actors/oidc/client.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';
import type { BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { MemoryOutput } from '../harness/fakes.ts';
import { bridge } from './helpers.ts';
import { launchChromium } from '../setup/chromium.ts';

const DOMAIN = 'visitors.relay.test';
let dir: string;
let relay: ReferenceChild;
let run: BridgeReferenceRun;
let browser: Chromium;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-visitor-'));
  relay = await spawnReference('relay', ['--port', '0', '--data-dir', join(dir, 'relay'), '--hosted-domains', DOMAIN, '--quiet']);
  run = await bridge(['--launcher-url', relay.url]);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await run?.stop();
  await relay?.stop();
  await rm(dir, { recursive: true, force: true });
});

function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => (m.type() === 'error' || /Content.Security.Policy/i.test(m.text())) && problems.push(m.text()));
  return problems;
}

/** The sign-in page of a fresh transaction. */
async function signInPage(page: Page): Promise<void> {
  const c = run.target.clients.basic;
  const url = new URL(`${run.target.issuer}/authorize`);
  const params = { response_type: 'code', client_id: c.client_id, redirect_uri: c.redirect_uri, state: 'visitor', scope: 'openid', code_challenge: newPkce().challenge, code_challenge_method: 'S256' };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  await page.goto(url.href);
  await page.getByTestId('visitor-offer').waitFor();
}

describe('the visitor offer', () => {
  it('checks the name from the browser, opens the launcher, and fills in the ID once it exists', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watch(page);
    const seen: string[] = [];
    page.on('request', (r) => seen.push(`${r.method()} ${r.url()}`));
    await signInPage(page);
    expect(await page.getByTestId('visitor-offer').textContent()).toContain(`.${DOMAIN}`);
    const handle = `ada${Date.now().toString(36)}`;
    await page.getByTestId('handle').fill(handle);
    await expect.poll(() => page.getByTestId('availability').textContent()).toBe(`${handle}.${DOMAIN} is free.`);
    // The typed name goes to the launcher only, never to the bridge.
    expect(seen.filter((r) => r.includes(handle) && r.includes(new URL(run.target.issuer).host))).toEqual([]);
    expect(seen.some((r) => r.startsWith(`GET ${relay.url}/hosted/availability?handle=${handle}`))).toBe(true);

    const [tab] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Create it in a new tab' }).click()]);
    expect(new URL(tab.url()).pathname).toBe('/app/');
    expect(new URL(tab.url()).searchParams.get('handle')).toBe(handle);
    expect(new URL(tab.url()).searchParams.get('from')).toBe('signin');
    await expect.poll(() => seen.some((r) => /^POST .*\/t\/[A-Za-z0-9_-]+\/creating$/.test(r))).toBe(true);
    await tab.close();

    // The name is created at the launcher (here: registered at the relay); the tab regains focus.
    const key = join(dir, `${handle}.json`);
    const io = () => ({ stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} });
    expect(await main(['node', 'svc-conformance', 'relay', 'keygen', '--identity', `${handle}.${DOMAIN}`, '--out', key], io())).toBe(0);
    const reg = io();
    expect(await main(['node', 'svc-conformance', 'relay', 'register', '--key', key, '--relay', relay.url], reg), reg.stderr.text).toBe(0);
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await expect.poll(() => page.locator('input[name=id]').inputValue()).toBe(`${handle}.${DOMAIN}`);
    await page.screenshot({ path: 'reports/screenshots/bridge-visitor-offer.png', fullPage: true });
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('without scripting the form still opens the launcher with the name', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const problems = watch(page);
    await signInPage(page);
    await page.getByTestId('handle').fill('grace');
    const [tab] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Create it in a new tab' }).click()]);
    await tab.waitForURL(/\/app\//);
    expect(new URL(tab.url()).searchParams.get('handle')).toBe('grace');
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});

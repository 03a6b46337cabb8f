// The bridge's pages as a user meets them, in headless Chromium (Debian's, through
// playwright-core) with scripting OFF: the sign-in page, the waiting page with the request link
// and match code (approved cross-device by the harness signer), consent (a claim unticked),
// the redirect to the client, /account with the app and its revocation, and /developers. No
// content-policy violation or console error; screenshots go to reports/screenshots/.
import { mkdir } from 'node:fs/promises';
import { type Browser as Chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { Signer } from '../../harness/actors/signer/index.ts';
import { newPkce } from '../../harness/actors/oidc/client.ts';
import type { BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { bridge } from './helpers.ts';
import { launchChromium } from '../setup/chromium.ts';

const SHOTS = 'reports/screenshots';
let run: BridgeReferenceRun;
let browser: Chromium;
let signer: Signer;

beforeAll(async () => {
  run = await bridge();
  browser = await launchChromium();
  signer = new Signer();
  await mkdir(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await signer?.close();
  await run?.stop();
});

function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => (m.type() === 'error' || /Content.Security.Policy/i.test(m.text())) && problems.push(m.text()));
  return problems;
}

describe('bridge pages in headless Chromium, scripting off', () => {
  it('signs in cross-device, releases only the ticked claims, lists the app in /account and revokes it', async () => {
    const c = run.target.clients.basic;
    const { identity, seed } = await run.authority.newIdentity();
    const context = await browser.newContext({ javaScriptEnabled: false });
    // The client's redirect URI does not exist: the browser's arrival there is answered here.
    await context.route(`${new URL(c.redirect_uri).origin}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'the client' }));
    const page = await context.newPage();
    const problems = watch(page);
    const pkce = newPkce();
    const url = new URL(`${run.target.issuer}/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: c.client_id,
      redirect_uri: c.redirect_uri,
      state: 'page-state',
      scope: 'openid svc_id profile',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    })) {
      url.searchParams.set(k, v);
    }
    await page.goto(url.href);
    await page.screenshot({ path: `${SHOTS}/bridge-signin.png` });
    await page.locator('input[name=id]').fill(identity);
    await page.locator('form[action$="/identify"] button[type=submit]').click();

    const requestUri = (await page.getByTestId('request-uri').textContent())!.trim();
    const match = (await page.getByTestId('match-code').textContent())!.trim();
    expect(requestUri).toMatch(new RegExp(`^${run.target.issuer}/r/`));
    expect(await page.getByTestId('qr-svg').locator('path, rect').count()).toBeGreaterThan(0);
    // Finding a signer: the identity resolved over HTTPS, so its own web app comes first.
    expect(await page.getByTestId('signers').locator('a').first().getAttribute('href')).toMatch(new RegExp(`^https://${identity.replace(/\./g, '\\.')}/app/\\?auth=`));
    await page.screenshot({ path: `${SHOTS}/bridge-waiting.png` });
    const approved = await signer.approve(requestUri, { key: { identity, seed }, match });
    expect(approved.receipt).toEqual({ status: 'ok' });

    // The waiting page refreshes itself (no script) and moves on to consent.
    await page.waitForSelector('form[action$="/consent"]', { timeout: 15_000 });
    expect(await page.locator('main').textContent()).toContain('app.bridge-test.example');
    await page.screenshot({ path: `${SHOTS}/bridge-consent.png` });
    await page.locator('input[name=claims][value=profile]').uncheck();
    await page.locator('button[value=approve]').click();
    await page.waitForURL(/^https:\/\/app\.bridge-test\.example\/cb\?/, { timeout: 10_000 });
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('page-state');
    expect(back.searchParams.get('iss')).toBe(run.target.issuer);

    const token = await fetch(`${run.target.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: c.redirect_uri, code_verifier: pkce.verifier }),
    });
    const body = (await token.json()) as { id_token: string; scope: string; access_token: string };
    expect(body.scope).toBe('openid svc_id');
    const claims = decodeJwt(body.id_token);
    expect(claims.svc_id).toBe(identity);
    expect(claims.profile).toBeUndefined();

    await page.goto(`${run.target.issuer}/account`);
    expect(await page.locator('main').textContent()).toContain('Harness basic app');
    await page.screenshot({ path: `${SHOTS}/bridge-account.png` });
    await page.locator('form[action="/account/revoke"] button').click();
    await page.waitForURL(`${run.target.issuer}/account`);
    // The app is gone from the authorized apps (it stays among the recent sign-ins).
    expect(await page.locator('form[action="/account/revoke"]').count()).toBe(0);
    // Revoking the app revoked its live access token.
    expect((await fetch(`${run.target.issuer}/userinfo`, { headers: { authorization: `Bearer ${body.access_token}` } })).status).toBe(401);

    await page.goto(`${run.target.issuer}/developers`);
    expect(await page.locator('main').textContent()).toContain('harness-basic');
    await page.screenshot({ path: `${SHOTS}/bridge-developers.png` });
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('an unknown client is an error page in the browser, and no page breaks its content policy with scripting on', async () => {
    const page = await browser.newPage();
    const problems = watch(page);
    const res = await page.goto(`${run.target.issuer}/authorize?client_id=nobody&redirect_uri=https://evil.example/cb&response_type=code&state=x`);
    expect(res?.status()).toBe(400);
    expect(page.url()).toMatch(new RegExp(`^${run.target.issuer}/authorize`));
    expect(await page.getByTestId('error-code').textContent()).toBe('invalid_request');
    // Chromium reports the page's own 400 on the console; that one is expected.
    problems.splice(0, problems.length, ...problems.filter((p) => !/status of 400/.test(p)));
    for (const path of ['/login', '/account', '/developers', '/privacy', '/security', '/abuse']) {
      const r = await page.goto(`${run.target.issuer}${path}`);
      expect(r?.status(), path).toBe(200);
      expect(r?.headers()['referrer-policy'], path).toBe('no-referrer');
    }
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});

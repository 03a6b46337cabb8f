// The login page in headless Chromium: QR code and match code shown, a cross-device approval
// completes the page by polling and lands on "Signed in as <identity>"; a pasted response
// completes a same-device login through the resume link.
import { chromium, type Browser as Chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRp, type RunningRp } from '../../reference/rp/app.ts';
import { decodeObject } from '../../protocol/codec.ts';
import { approve, deliver, identity, staticResolver } from './helpers.ts';

let rp: RunningRp;
let browser: Chromium;

beforeAll(async () => {
  rp = await startRp({ dataDir: ':memory:' }, { resolver: staticResolver() });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await rp?.close();
});

async function requestOf(page: import('playwright-core').Page): Promise<Record<string, unknown>> {
  const encoded = await page.getByTestId('encoded-request').inputValue();
  const decoded = decodeObject(encoded);
  if (!decoded.ok) throw new Error('the page shows no request');
  return decoded.value;
}

describe('login page in Chromium', () => {
  it('shows the QR code and match code; a cross-device approval completes it by polling', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${rp.url}/login`);
    await expect(page.getByTestId('qr-svg').isVisible()).resolves.toBe(true);
    const match = (await page.getByTestId('match-code').textContent())!;
    expect(match).toMatch(/^\d{2}$/);
    const request = await requestOf(page);
    const r = await deliver(rp.url, '/svc/response', approve(request), match);
    expect(r.status).toBe(200);
    await page.waitForURL(`${rp.url}/`, { timeout: 10_000 });
    await expect(page.getByTestId('signed-in-identity').textContent()).resolves.toBe(identity);
    expect(errors).toEqual([]);
    await page.close();
  }, 30_000);

  it('a pasted response signs this browser in through the resume link', async () => {
    const page = await browser.newPage();
    await page.goto(`${rp.url}/login`);
    const request = await requestOf(page);
    await page.locator('#paste-response').fill(approve(request));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${rp.url}/`, { timeout: 10_000 });
    await expect(page.getByTestId('signed-in-identity').textContent()).resolves.toBe(identity);
    await page.close();
  }, 30_000);

  it('a wrong match code shows that the sign-in ended', async () => {
    const page = await browser.newPage();
    await page.goto(`${rp.url}/login`);
    const match = (await page.getByTestId('match-code').textContent())!;
    const request = await requestOf(page);
    const wrong = String((Number(match) + 1) % 100).padStart(2, '0');
    expect((await deliver(rp.url, '/svc/response', approve(request), wrong)).status).toBe(403);
    await page.waitForSelector('[data-testid="status"][data-status="ended"]', { timeout: 10_000 });
    await page.close();
  }, 30_000);
});

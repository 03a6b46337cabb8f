// The login page as a user meets it: headless Chromium (Debian's, through playwright-core) on the
// reference RP started as `svc-reference rp`, resolving through the test authority over real DNS
// and HTTPS, approved by the harness signer.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser as Chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { Signer } from '../../harness/actors/signer/index.ts';
import { spawnReferenceRp, type RpChild } from '../../harness/suites/rp/launch.ts';
import { decodeObject } from '../../protocol/common/codec.ts';
import { launchChromium } from '../setup/chromium.ts';

let authority: Authority;
let rp: RpChild;
let origin: string;
let dataDir: string;
let browser: Chromium;
let signer: Signer;

beforeAll(async () => {
  authority = await startAuthority();
  dataDir = await mkdtemp(join(tmpdir(), 'svc-page-'));
  rp = await spawnReferenceRp(['--port', '0', '--data-dir', dataDir, '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--quiet']);
  origin = rp.origin;
  browser = await launchChromium();
  signer = new Signer();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await rp?.stop();
  signer?.close();
  await authority?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('login page in headless Chromium', () => {
  it('shows the QR code and match code, and a cross-device approval completes the page by polling', async () => {
    const key = await authority.newIdentity();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${origin}/login`);
    const match = (await page.getByTestId('match-code').textContent())!.trim();
    expect(match).toMatch(/^\d{2}$/);
    const qr = page.getByTestId('qr-svg');
    await expect(qr.evaluate((el) => el.tagName.toLowerCase())).resolves.toBe('svg');
    expect(await qr.locator('path, rect').count()).toBeGreaterThan(0);
    const link = await page.getByTestId('request-uri').getAttribute('href');
    expect(link).toMatch(new RegExp(`^${origin}/r/[0-9A-HJKMNP-TV-Z]{8}$`));
    // The page never serves the match code through the link; the user reads it off the screen.
    const result = await signer.approve(link!, { key: { identity: key.identity, seed: key.seed }, match });
    expect(result.receipt).toEqual({ status: 'ok' });
    await page.waitForURL(`${origin}/`, { timeout: 10_000 });
    expect(await page.getByTestId('signed-in-identity').textContent()).toBe(key.identity);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a wrong match code shows that the sign-in ended', async () => {
    const key = await authority.newIdentity();
    const page = await browser.newPage();
    await page.goto(`${origin}/login`);
    const match = (await page.getByTestId('match-code').textContent())!.trim();
    const wrong = String((Number(match) + 1) % 100).padStart(2, '0');
    const link = await page.getByTestId('request-uri').getAttribute('href');
    await expect(signer.approve(link!, { key: { identity: key.identity, seed: key.seed }, match: wrong })).rejects.toMatchObject({ ruleId: 'ns.delivery.reject-status' });
    await page.waitForSelector('[data-testid="status"][data-status="ended"]', { timeout: 10_000 });
    await page.close();
  });

  it('a pasted response signs in the same browser; the resume link does nothing in another browser', async () => {
    const key = await authority.newIdentity();
    const page = await browser.newPage();
    await page.goto(`${origin}/login`);
    const encoded = await page.getByTestId('encoded-request').inputValue();
    const decoded = decodeObject(encoded);
    expect(decoded.ok).toBe(true);
    const { encoded: response } = signer.sign(decoded.ok ? decoded.value : {}, { identity: key.identity, seed: key.seed });
    await page.locator('#paste-response').fill(response);
    await page.locator('#paste-form button[type=submit]').click();
    await page.waitForURL(`${origin}/`, { timeout: 10_000 });
    expect(await page.getByTestId('signed-in-identity').textContent()).toBe(key.identity);
    await page.close();

    // Same device through the signer: a browser without the binding cookie cannot use the code.
    const starter = await browser.newContext();
    const other = await browser.newContext();
    const start = await starter.newPage();
    await start.goto(`${origin}/login`);
    const request = decodeObject(await start.getByTestId('encoded-request').inputValue());
    if (!request.ok) throw new Error(request.reason);
    const signed = signer.sign(request.value, { identity: key.identity, seed: key.seed });
    const delivered = await signer.deliver(request.value.response_uri as string, signed.encoded);
    expect(delivered.status).toBe(200);
    const resumeUri = (delivered.body as { resume_uri: string }).resume_uri;
    const thief = await other.newPage();
    const stolen = await thief.goto(resumeUri);
    expect(stolen?.status()).toBe(403);
    await thief.goto(`${origin}/`);
    expect(await thief.getByTestId('signed-out').count()).toBe(1);
    await starter.close();
    await other.close();
  });
});

// The HTML report as an implementer reads it: a failing run's report (real exchanges with a small
// HTTP server whose answers are hostile: markup in a body and a header), opened in headless
// Chromium from a file, shows the failure card with the rule's text, the target's answer, the
// exchange and a curl line; a property failure shows its counterexample and replay command;
// nothing the target sent runs as script; the filters hide and show cards. The Markdown and JUnit
// reports carry the same exchange and curl line.
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import fc from 'fast-check';
import { HttpClient } from '../../harness/actors/http.ts';
import { sessionCheck, suiteProperty } from '../../harness/run/check.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { said } from '../../harness/run/answers.ts';
import { fileReporter, parseReportOption } from '../../harness/report/index.ts';
import type { RunReport } from '../../harness/run/model.ts';
import { rules } from '../../schemas/ts/rules.ts';
import { launchChromium } from '../setup/chromium.ts';

const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';

let server: Server;
let origin: string;
let dir: string;
let browser: Browser;
let report: RunReport;

/** A check session that records its client's exchanges, as the suites' drivers do. */
function session() {
  const exchanges: unknown[] = [];
  const http = new HttpClient({ onExchange: (x) => void exchanges.push(x), keepExchanges: 0 });
  return { http, evidence: () => ({ exchanges }), close: () => http.close() };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      if (req.url === '/ok') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      const text = JSON.stringify({ error: 'resolution_failed', detail: `could not be fetched (23) ${HOSTILE}`, echo: body, pad: 'x'.repeat(3000) });
      res.writeHead(401, { 'content-type': 'application/json', 'x-evil': '"><script>window.__pwned = 3</script>' }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  dir = await mkdtemp(join(tmpdir(), 'svc-html-report-'));
  const bound = { suite: 'rp', open: session };
  const checks = [
    sessionCheck(bound, {
      id: 'rp/verify/valid-login',
      title: 'a valid approval completes the login',
      rules: ['ns.verify.6'],
      run: async (s, e) => {
        await s.http.get(`${origin}/ok`);
        const r = await s.http.post(`${origin}/deliver`, 'eyJzdmNfYXV0aCI6IjEifQ', {
          headers: { 'content-type': 'text/plain', cookie: 'svc_binding=abc', 'x-svc-timestamp': '2026-11-26T14:00:00Z', 'x-svc-nonce': 'n0nce', 'x-svc-signature': 'c2ln' },
        });
        e.that(r.status === 200, `the delivery answered ${said(r)}`, 'status');
        await s.http.get(`${origin}/ok`); // a later exchange: the failing one is still the one quoted
      },
    }),
    sessionCheck(bound, {
      id: 'rp/metadata/fetch',
      title: 'the metadata answers',
      rules: ['ns.metadata.required'],
      run: async (s, e) => void e.that((await s.http.get(`${origin}/ok`)).status === 200, 'no'),
    }),
    suiteProperty('rp', {
      id: 'rp/property/valid-logins',
      title: 'every valid login completes',
      rules: ['ns.verify.6'],
      arbitrary: fc.integer({ min: 0, max: 100 }),
      predicate: async (n) => {
        const s = session();
        try {
          const r = await s.http.get(`${origin}/login?n=${n}`);
          return n < 10 || r.status === 200 ? true : { ok: false, detail: `login ${n} answered ${r.status}`, evidence: s.evidence(), code: 'status' };
        } finally {
          await s.close();
        }
      },
    }),
  ];
  const targets = ['html', 'md', 'junit'].map((f) => parseReportOption(`${f}=${join(dir, `report.${f}`)}`));
  report = await runChecks(checks, { seed: 7, runs: 20, rules, commandLine: 'svc-conformance run --reference', reporters: targets.map((t) => fileReporter(t, { rules })) });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the HTML report', () => {
  it('shows the failure card with the rule, the answer, the exchange and a curl line, and runs nothing the target sent', async () => {
    expect(report.results.map((r) => [r.id, r.status, r.code])).toEqual([
      ['rp/verify/valid-login', 'failed', 'status'],
      ['rp/metadata/fetch', 'passed', undefined],
      ['rp/property/valid-logins', 'failed', 'status'],
    ]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('request', (req) => {
      if (!req.url().startsWith('file:')) errors.push(`network request to ${req.url()}`);
    });
    await page.goto(pathToFileURL(join(dir, 'report.html')).href);
    const card = page.locator('.result[data-status="failed"]', { hasText: 'rp/verify/valid-login' });
    await expect(card.isVisible()).resolves.toBe(true);
    const text = await card.innerText();
    expect(text).toContain('The identity is resolved through the published chain'); // the rule as the document states it
    expect(text).toContain('the delivery answered 401 resolution_failed');
    expect(text).toContain('Reproduce the request whose answer the failure quotes with curl');
    expect(text).toContain('POST http://127.0.0.1');
    expect(text).toContain('x-evil'); // the response headers, shown as text
    expect(text).toContain('<script>window.__pwned = 1</script><img src=x onerror='); // the hostile body, shown as text
    expect(text).toMatch(/curl -i -X POST .*-H 'cookie: svc_binding=abc'.*-H 'x-svc-nonce: n0nce'.*--data-binary eyJzdmNfYXV0aCI6IjEifQ/s);
    expect(text).toMatch(/timestamp and nonce are stale/);
    expect(text).toMatch(/more characters/); // the long body folded
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);

    const property = await page.locator('.result', { hasText: 'rp/property/valid-logins' }).innerText();
    expect(property).toMatch(/shrunk counterexample/i);
    expect(property).toContain('--seed 7 --replay');

    // The filters: failures only by default; "all" shows the passed check too; a rule narrows.
    await expect(page.locator('.result', { hasText: 'rp/metadata/fetch' }).isVisible()).resolves.toBe(false);
    await page.selectOption('#f-status', '');
    await expect(page.locator('.result', { hasText: 'rp/metadata/fetch' }).isVisible()).resolves.toBe(true);
    await page.fill('#f-rule', 'ns.metadata');
    expect(await page.locator('#shown').innerText()).toBe('1 of 3 checks shown');
    await page.fill('#f-rule', '');
    await page.selectOption('#f-status', 'act');
    // SVC_REPORT_SCREENSHOT=FILE keeps a picture of the page, to judge it as a reader would.
    if (process.env.SVC_REPORT_SCREENSHOT) await page.screenshot({ path: process.env.SVC_REPORT_SCREENSHOT, fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('puts the same exchange and curl line in the Markdown and JUnit reports', async () => {
    const md = await readFile(join(dir, 'report.md'), 'utf8');
    expect(md).toContain('### `rp/verify/valid-login`: failed (status)');
    expect(md).toContain('> The identity is resolved through the published chain');
    expect(md).toMatch(/```sh\ncurl -i -X POST /);
    expect(md).toContain('HTTP 401');
    expect(md).toMatch(/```+http\n[^`]*<script>window.__pwned = 1/); // the hostile body only inside a fenced block
    const junit = await readFile(join(dir, 'report.junit'), 'utf8');
    expect(junit).toMatch(/<failure message="[^"]*" type="status">/);
    expect(junit).toMatch(/<system-out>[^<]*reproduce the request whose answer the failure quotes:\ncurl -i -X POST/);
    expect(junit).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
  });
});

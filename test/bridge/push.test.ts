// Push to the app end to end (document 2, Authentication 7): a reference bridge with its own
// service ID on one reference relay, the user on a second, the push command the harness's own
// `svc-conformance relay send`. The suite's push checks play the user's app: it trusts the bridge,
// reads the sys.auth.request, and approves the pushed request with the match code. Without the
// test-only interval the bridge waits the document's 15 s between prompts, and a push the
// command cannot send is shown, audited and counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../../harness/run/spawn.ts';
import { BridgeSession } from '../../harness/suites/bridge/driver.ts';
import type { BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { newPkce } from '../../harness/actors/oidc/client.ts';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { prompts, pushUser } from '../../harness/suites/bridge/checks/push.ts';
import { bridge, runCli, suiteArgs } from './helpers.ts';
import { launchChromium } from '../setup/chromium.ts';

let run: BridgeReferenceRun;
let metrics: string;
beforeAll(async () => {
  const port = await closedPort();
  metrics = `http://127.0.0.1:${port}/metrics`;
  run = await bridge(['--metrics-addr', `127.0.0.1:${port}`], {}, { push: true });
}, 90_000);
afterAll(async () => {
  await run?.stop();
});

describe('push to the app', () => {
  it('delivers the prompt through two relays, and the app approves it with the match code', async () => {
    const cli = await runCli([...(await suiteArgs(run)), '--check', 'push', '--profile']);
    expect(cli.code, cli.out + cli.err).toBe(0);
    expect(cli.report.results.map((r) => `${r.id} ${r.status}`).sort()).toEqual([
      'bridge/profile/push passed',
      'bridge/push/limits passed',
      'bridge/push/prompt passed',
      'bridge/push/untrusted-dropped passed',
    ]);
    const text = await (await fetch(metrics)).text();
    expect(text).toMatch(/^svc_bridge_audit_events_total\{event="push\.sent"\} [1-9]\d*$/m);
  }, 120_000);

  it('offers Send to my app on the waiting page in Chromium (scripting off): the app gets the prompt and approves with the code the page shows', async () => {
    const s = new BridgeSession(run.target);
    const browser = await launchChromium();
    try {
      const user = await pushUser(s);
      const c = run.target.clients.basic;
      const url = new URL(`${run.target.issuer}/authorize`);
      const pkce = newPkce();
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id: c.client_id,
        redirect_uri: c.redirect_uri,
        state: 'st',
        scope: 'openid',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const page = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
      await page.goto(url.href);
      await page.locator('input[name=id]').fill(user.key.identity);
      await page.locator('form[action$="/identify"] button[type=submit]').click();
      const txUrl = page.url().split('?')[0]!;
      // The bridge's ID is on the status view; the user trusts it at their relay.
      const view = (await (await page.context().request.get(txUrl, { headers: { accept: 'application/json' } })).json()) as { push: { identity: string } };
      await user.relay.systemFile(user.mailbox, 'PUT', 'relay/inbox-policy.json', JSON.stringify({ version: 1, mode: 'open', trusted_auth_services: [view.push.identity] }));
      await page.getByTestId('push').click();
      await page.getByTestId('push-sent').waitFor({ timeout: 15_000 });
      await page.screenshot({ path: 'reports/screenshots/bridge-push-sent.png' });
      const [prompt] = await prompts({ user, from: view.push.identity });
      const body = prompt!.body as { request_uri: string };
      const match = (await page.getByTestId('match-code').textContent())!.trim();
      const approved = await s.signer.approve(body.request_uri, { key: user.key, match });
      expect(approved.receipt).toEqual({ status: 'ok' });
      await page.waitForSelector('form[action$="/consent"]', { timeout: 15_000 });
    } finally {
      await browser.close();
      await s.close();
    }
  }, 120_000);

  it("waits the document's 15 s by default, and shows, audits and counts a prompt that could not be sent", async () => {
    const port = await closedPort();
    // The last --push-interval wins: the document's value. The user has no relay, so the command fails.
    const plain = await bridge(['--push-interval', String(limits.push_prompt_interval_seconds), '--metrics-addr', `127.0.0.1:${port}`], {}, { push: true });
    const s = new BridgeSession(plain.target);
    try {
      const user = await s.newUser();
      const opened = await s.openAuthorize(user.browser, s.params('basic', newPkce(), 'st', 'n'));
      const txUrl = new URL(opened.location!, plain.target.issuer).href;
      const { view } = await s.post(user.browser, `${txUrl}/identify`, { id: user.key.identity });
      expect(view.push).toMatchObject({ sent: 0, remaining: limits.push_prompts_max });
      const asked = Date.now();
      const first = await s.post(user.browser, `${txUrl}/push`, {});
      expect(first.res.status).toBe(200);
      const push = first.view.push as { sent: number; remaining: number; next_at: string; last: string };
      expect(push).toMatchObject({ sent: 1, remaining: limits.push_prompts_max - 1, last: 'failed' });
      // From before the request (the bridge claimed the prompt after it; a loaded machine's failing command takes seconds), less next_at's whole-second rounding.
      expect(parseRfc3339(push.next_at)! - asked).toBeGreaterThan((limits.push_prompt_interval_seconds - 1) * 1000);
      expect((await s.post(user.browser, `${txUrl}/push`, {})).res.status).toBe(429);
      const page = await user.browser.http.get(txUrl, { headers: { accept: 'text/html' } });
      expect(page.text()).toContain('data-testid="push-failed"');
      expect(page.text()).not.toContain('data-testid="push"');
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/^svc_bridge_audit_events_total\{event="push\.failed"\} 1$/m);
    } finally {
      await s.close();
      await plain.stop();
    }
  }, 120_000);
});

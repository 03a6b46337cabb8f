// /metrics on the private listener (--metrics-addr, OAUTH_METRICS_ADDR): per-route counters and
// latency, one counter per audit event; the public listener does not serve it. The per-IP rate
// limits answer 429 with Retry-After (and, in JSON, rate_limit_exceeded) beyond their count, and each refusal is counted by route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../../harness/run/spawn.ts';
import { BridgeSession } from '../../harness/suites/bridge/driver.ts';
import type { BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { bridge } from './helpers.ts';

let run: BridgeReferenceRun;
let metricsUrl: string;
beforeAll(async () => {
  const port = await closedPort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  run = await bridge(['--metrics-addr', `127.0.0.1:${port}`]);
}, 60_000);
afterAll(async () => {
  await run?.stop();
});

describe('bridge metrics', () => {
  it('counts requests per route and status, their latency, and audit events, on the private listener only', async () => {
    const s = new BridgeSession(run.target);
    try {
      await s.tokens();
    } finally {
      await s.close();
    }
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^svc_bridge_requests_total\{route="\/token",status="200"\} 1$/m);
    expect(text).toMatch(/^svc_bridge_requests_total\{route="\/authorize",status="303"\} \d+$/m);
    expect(text).toMatch(/^svc_bridge_request_seconds_count\{route="\/token"\} 1$/m);
    expect(text).toMatch(/^svc_bridge_audit_events_total\{event="signin.succeeded"\} 1$/m);
    expect((await fetch(`${run.target.issuer}/metrics`)).status).toBe(404);
  }, 60_000);
});

describe('bridge rate limits', () => {
  it('refuses the request past the per-IP limit with 429, Retry-After and rate_limit_exceeded, and counts it by route', async () => {
    const port = await closedPort();
    const limitedRun = await bridge(['--metrics-addr', `127.0.0.1:${port}`, '--authorize-limit', '3']);
    const s = new BridgeSession(limitedRun.target);
    try {
      const user = await s.newUser();
      const params = s.params('basic', { verifier: '', challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' }, 'st', 'n');
      for (let i = 0; i < 3; i++) expect((await s.openAuthorize(user.browser, params)).status).toBe(303);
      const refused = await s.openAuthorize(user.browser, params);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.location).toBeUndefined();
      // A JSON client reads the code the RP and the relay use for the same refusal.
      const asJson = await user.browser.http.get((await s.oidc()).authorizeUrl(params), { headers: { accept: 'application/json' } });
      expect(asJson.status).toBe(429);
      expect(asJson.json()).toMatchObject({ error: 'rate_limit_exceeded', rule: 'ob.errors.rate-limited' });
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toMatch(/^svc_bridge_rate_limited_total\{route="\/authorize"\} 2$/m);
    } finally {
      await s.close();
      await limitedRun.stop();
    }
  }, 60_000);
});

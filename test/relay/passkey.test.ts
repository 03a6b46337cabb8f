// A real passkey against the reference relay's keystore: headless Chromium with the WebAuthn
// virtual authenticator (DevTools protocol through playwright-core) creates a credential on the
// relay's test page (--test-pages), the harness enrolls it, and the browser's assertion over a
// relay-issued challenge fetches the wrapped seed. The same assertion replayed, one without user
// verification, and one for an RP id that is neither the identity nor its registrable domain are
// refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { type Browser, type CDPSession, type Page } from 'playwright-core';
import { profileFor } from '../../protocol/common/profile.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { Session } from '../../harness/suites/relay/driver.ts';
import type { RelayIdentity } from '../../harness/actors/relay/index.ts';
import type { Assertion } from '../../protocol/relay/webauthn.ts';
import { launchChromium } from '../setup/chromium.ts';

let run: RelayReferenceRun;
let browser: Browser;
let s: Session;
let id: RelayIdentity;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;

beforeAll(async () => {
  run = await startRelayReference({ profile: profileFor(), extraArgs: ['--test-pages'] });
  s = new Session(run.target);
  id = await s.identity();
  const origin = `http://${id.identity}:${new URL(run.target.url).port}`;
  // The identity's name is the page's host (and so a valid RP id): every name maps to the relay's
  // loopback address, and that origin counts as secure for WebAuthn.
  browser = await launchChromium({ args: ['--host-resolver-rules=MAP * 127.0.0.1', `--unsafely-treat-insecure-origin-as-secure=${origin}`] });
  page = await browser.newPage();
  cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  }));
  const loaded = await page.goto(`${origin}/test/passkey`);
  expect(loaded?.status()).toBe(200);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await s?.close();
  await run?.stop();
});

type Created = { credential_id: string; credential_public_key: string; credential_alg: number };

const create = (rpId: string): Promise<Created> => page.evaluate((r) => (window as unknown as { createPasskey(r: string): Promise<Created> }).createPasskey(r), rpId);

async function challenge(): Promise<string> {
  return ((await s.relay.challenge(id.identity)).json() as { challenge: string }).challenge;
}

const assert = (rpId: string, c: string, credentialId: string, uv: 'required' | 'discouraged', form: 'issued' | 'utf8' = 'issued'): Promise<Assertion> =>
  page.evaluate(([r, ch, cred, v, f]) => (window as unknown as { assertPasskey(...a: string[]): Promise<Assertion> }).assertPasskey(r!, ch!, cred!, v!, f!), [rpId, c, credentialId, uv, form]);

async function enroll(created: Created): Promise<void> {
  const r = await s.relay.keystoreEnroll(id, { enrollment_id: `enr-${randomBytes(4).toString('hex')}`, kind: 'passkey', wrap: 'prf', wrapped: '{"iv":"AAAA","ciphertext":"BBBB"}', ...created });
  expect(r.status, r.text()).toBe(200);
}

describe('a passkey made by headless Chromium (virtual authenticator) and the reference keystore', () => {
  it('fetches with a browser assertion; the same assertion again is refused', async () => {
    const created = await create(id.identity);
    await enroll(created);
    const a = await assert(id.identity, await challenge(), created.credential_id, 'required');
    const ok = await s.relay.keystoreFetch(id.identity, a, id.identity);
    expect(ok.status, ok.text()).toBe(200);
    expect((ok.json() as { entries: unknown[] }).entries).toHaveLength(1);
    const again = await s.relay.keystoreFetch(id.identity, a, id.identity);
    expect(again.status).toBe(401);
  });

  it('refuses an assertion without user verification', async () => {
    const created = await create(id.identity);
    await enroll(created);
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    try {
      const a = await assert(id.identity, await challenge(), created.credential_id, 'discouraged');
      const r = await s.relay.keystoreFetch(id.identity, a, id.identity);
      expect(r.status).toBe(401);
    } finally {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    }
  });

  // Issue 26: "a passkey scoped to `relay.test` must not be refused for `x.a.relay.test`": the
  // registrable domain comes from the public suffix list, not from the relay's hosted domain.
  it('fetches with a passkey scoped to the registrable domain (relay.test), rp_id named or left out', async () => {
    const domain = id.identity.split('.').slice(-2).join('.');
    const created = await create(domain);
    await enroll(created);
    const named = await s.relay.keystoreFetch(id.identity, await assert(domain, await challenge(), created.credential_id, 'required'), domain);
    expect(named.status).toBe(200);
    const unnamed = await s.relay.keystoreFetch(id.identity, await assert(domain, await challenge(), created.credential_id, 'required'));
    expect(unnamed.status).toBe(200);
    // The challenge as the deployed web app hands it to the browser: TextEncoder's bytes of the issued string.
    const encoded = await s.relay.keystoreFetch(id.identity, await assert(domain, await challenge(), created.credential_id, 'required', 'utf8'));
    expect(encoded.status).toBe(200);
  });

  it('refuses an assertion for an RP id that is neither the identity nor its registrable domain', async () => {
    const hosted = id.identity.split('.').slice(-3).join('.'); // a.relay.test: the hosted domain, not registrable
    const created = await create(hosted);
    await enroll(created);
    const a = await assert(hosted, await challenge(), created.credential_id, 'required');
    const r = await s.relay.keystoreFetch(id.identity, a, hosted);
    expect(r.status).toBe(401);
  });
});

// The developer console on the reference bridge, driven over HTTP as a browser: the owner signs
// in natively on the bridge's own origin, registers an application (secret shown once), signs a
// user in with it, rotates its secret (both work until the previous one is retired), reaches the
// per-owner limit, is the only one who may change it, and deletes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeSession, type User } from '../../harness/suites/bridge/driver.ts';
import type { BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import type { ClientCredentials } from '../../harness/actors/oidc/client.ts';
import { bridge } from './helpers.ts';

let run: BridgeReferenceRun;
let s: BridgeSession;
beforeAll(async () => {
  run = await bridge();
  s = new BridgeSession(run.target);
}, 60_000);
afterAll(async () => {
  await s?.close();
  await run?.stop();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };

async function signedInOwner(): Promise<User> {
  const owner = await s.newUser();
  const page = await owner.browser.http.get(`${run.target.issuer}/developers`, { headers: { accept: 'text/html' } });
  const href = /data-testid="console-sign-in" href="([^"]+)"/.exec(page.text())![1]!.replace(/&amp;/g, '&');
  const { response } = await s.completeAuthorization(owner, href, `${run.target.issuer}/developers`);
  expect(response.code).toBeDefined();
  const home = await owner.browser.http.get(`${run.target.issuer}/developers`, { headers: { accept: 'text/html' } });
  expect(home.text()).toContain(`data-testid="owner">${owner.key.identity}<`);
  return owner;
}

async function create(owner: User, name: string): Promise<{ status: number; body: Record<string, string> }> {
  const res = await owner.browser.http.post(
    `${run.target.issuer}/developers/clients`,
    new URLSearchParams({ name, redirect_uris: 'https://console-app.example/cb', token_endpoint_auth_method: 'client_secret_basic' }).toString(),
    { headers: FORM },
  );
  return { status: res.status, body: res.status === 201 ? (res.json() as Record<string, string>) : {} };
}

async function change(owner: User, clientId: string, op: string, fields: Record<string, string> = {}) {
  return owner.browser.http.post(`${run.target.issuer}/developers/clients/${encodeURIComponent(clientId)}/${op}`, new URLSearchParams(fields).toString(), { headers: FORM });
}

/** A code for `creds` and its redemption with `secret`. */
async function redeemWith(creds: ClientCredentials, secret: string): Promise<number> {
  const session = new BridgeSession({ ...run.target, clients: { ...run.target.clients, basic: creds } });
  try {
    const r = await session.signIn();
    const oidc = await session.oidc();
    return (await oidc.token({ ...creds, client_secret: secret }, 'basic', r.response.code!, r.pkce.verifier)).status;
  } finally {
    await session.close();
  }
}

describe('the developer console', () => {
  it('registers, uses, rotates, limits, guards and deletes an application', async () => {
    const owner = await signedInOwner();
    const made = await create(owner, 'Console app');
    expect(made.status).toBe(201);
    const clientId = made.body.client_id!;
    const first = made.body.client_secret!;
    expect(clientId).toMatch(/^svc_/);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const creds: ClientCredentials = { client_id: clientId, client_secret: first, redirect_uri: 'https://console-app.example/cb' };
    expect(await redeemWith(creds, first)).toBe(200);

    const rotated = await change(owner, clientId, 'rotate');
    expect(rotated.status).toBe(201);
    const second = (rotated.json() as Record<string, string>).client_secret!;
    expect(second).not.toBe(first);
    expect(await redeemWith(creds, first)).toBe(200);
    expect(await redeemWith(creds, second)).toBe(200);
    expect((await change(owner, clientId, 'retire')).status).toBe(200);
    expect(await redeemWith(creds, first)).toBe(401);
    expect(await redeemWith(creds, second)).toBe(200);

    // Another signed-in ID may not touch it, until the owner adds it as a co-owner.
    const other = await signedInOwner();
    expect((await change(other, clientId, 'edit', { name: 'Hijacked' })).status).toBe(404);
    expect((await change(owner, clientId, 'owners', { id: other.key.identity })).status).toBe(200);
    expect((await change(other, clientId, 'edit', { name: 'Renamed by a co-owner' })).status).toBe(200);

    for (let i = 2; i <= 10; i++) expect((await create(owner, `App ${i}`)).status).toBe(201);
    expect((await create(owner, 'One too many')).status).toBe(409);

    expect((await change(owner, clientId, 'delete')).status).toBe(200);
    const user = await s.newUser();
    const gone = await user.browser.http.get(
      `${run.target.issuer}/authorize?response_type=code&client_id=${clientId}&redirect_uri=https://console-app.example/cb&state=x&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256`,
    );
    expect(gone.status).toBe(400);
    expect(gone.location).toBeUndefined();
  }, 120_000);
});

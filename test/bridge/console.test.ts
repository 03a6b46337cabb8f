// The developer console on the reference bridge, driven over HTTP as a browser: the owner signs
// in natively on the bridge's own origin, registers an application (secret shown once), signs a
// user in with it, rotates its secret (both work until the previous one is retired), reaches the
// per-owner limit, is the only one who may change it, and deletes it. private_key_jwt clients
// with a pasted or a linked key set; a cross-site POST is refused; the registration allowlist.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
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

async function signedInOwner(on: BridgeSession = s): Promise<User> {
  const issuer = on.target.issuer;
  const owner = await on.newUser();
  const page = await owner.browser.http.get(`${issuer}/developers`, { headers: { accept: 'text/html' } });
  const href = /data-testid="console-sign-in" href="([^"]+)"/.exec(page.text())![1]!.replace(/&amp;/g, '&');
  const { response } = await on.completeAuthorization(owner, href, `${issuer}/developers`);
  expect(response.code).toBeDefined();
  const home = await owner.browser.http.get(`${issuer}/developers`, { headers: { accept: 'text/html' } });
  expect(home.text()).toContain(`data-testid="owner">${owner.key.identity}<`);
  return owner;
}

/** A private_key_jwt application registered with `keys` (pasted jwks or a jwks_uri); its credentials. */
async function jwtClient(owner: User, keys: Record<string, string>): Promise<{ status: number; creds?: ClientCredentials; privateJwk: Record<string, unknown> }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomBytes(6).toString('base64url');
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256' };
  const publicJwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] };
  const fields: Record<string, string> = { name: 'JWT app', redirect_uris: 'https://jwt-console.example/cb', token_endpoint_auth_method: 'private_key_jwt', ...keys };
  if (fields.jwks === 'PUBLIC') fields.jwks = JSON.stringify(publicJwks);
  if (fields.jwks_uri !== undefined) await run.authority.serveFile({ url: fields.jwks_uri, body: publicJwks });
  const res = await owner.browser.http.post(`${run.target.issuer}/developers/clients`, new URLSearchParams(fields).toString(), { headers: FORM });
  if (res.status !== 201) return { status: res.status, privateJwk };
  const id = (res.json() as Record<string, string>).client_id!;
  return { status: 201, creds: { client_id: id, private_jwk: privateJwk, redirect_uri: 'https://jwt-console.example/cb' }, privateJwk };
}

async function redeemJwt(creds: ClientCredentials): Promise<number> {
  const session = new BridgeSession({ ...run.target, clients: { ...run.target.clients, jwt: creds } });
  try {
    return (
      await session.tokens({ client: 'jwt' }).then(
        () => ({ status: 200 }),
        (error: Error) => ({ status: Number(/ (\d{3}) /.exec(error.message)?.[1] ?? 0) }),
      )
    ).status;
  } finally {
    await session.close();
  }
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

  it('registers private_key_jwt applications with a pasted or a linked key set, never a private key', async () => {
    const owner = await signedInOwner();
    const pasted = await jwtClient(owner, { jwks: 'PUBLIC' });
    expect(pasted.status).toBe(201);
    expect(await redeemJwt(pasted.creds!)).toBe(200);
    const info = await run.authority.info();
    const port = info.httpsPort === 443 ? '' : `:${info.httpsPort}`;
    const linked = await jwtClient(owner, { jwks_uri: `https://keys-${randomBytes(4).toString('hex')}.clients.test${port}/jwks.json` });
    expect(linked.status).toBe(201);
    expect(await redeemJwt(linked.creds!)).toBe(200);
    const leaked = await jwtClient(owner, { jwks: JSON.stringify({ keys: [{ kty: 'RSA', n: 'x', e: 'AQAB', d: 'secret' }] }) });
    expect(leaked.status).toBe(400);
    expect((await jwtClient(owner, { jwks_uri: 'http://keys.example/jwks.json' })).status).toBe(400);
  }, 120_000);

  it('refuses a change posted from another site before reading the session', async () => {
    const owner = await signedInOwner();
    const res = await owner.browser.http.post(`${run.target.issuer}/developers/clients`, new URLSearchParams({ name: 'CSRF', redirect_uris: 'https://csrf.example/cb' }).toString(), {
      headers: { ...FORM, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(res.status).toBe(403);
    expect(res.text()).toMatch(/from the console page itself/);
  }, 60_000);

  it('under the allowlist, only listed IDs register applications', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-allowlist-'));
    const listed = await run.authority.newIdentity();
    await writeFile(join(dir, 'allow.txt'), `# who may register\n${listed.identity}\n`);
    const gated = await bridge(['--client-registration', 'allowlist', '--registration-allowlist', join(dir, 'allow.txt')]);
    const g = new BridgeSession(gated.target);
    try {
      const stranger = await signedInOwner(g);
      const refused = await stranger.browser.http.post(`${gated.target.issuer}/developers/clients`, new URLSearchParams({ name: 'No', redirect_uris: 'https://no.example/cb' }).toString(), {
        headers: FORM,
      });
      expect(refused.status).toBe(403);
      expect(refused.text()).toMatch(/allowlist/);
      const member = await g.newUser();
      const mine = { ...member, key: { identity: listed.identity, seed: listed.seed } };
      await gated.authority.publish({ identity: listed.identity, seed: listed.seed });
      const page = await mine.browser.http.get(`${gated.target.issuer}/developers`, { headers: { accept: 'text/html' } });
      const href = /data-testid="console-sign-in" href="([^"]+)"/.exec(page.text())![1]!.replace(/&amp;/g, '&');
      await g.completeAuthorization(mine, href, `${gated.target.issuer}/developers`);
      const ok = await mine.browser.http.post(`${gated.target.issuer}/developers/clients`, new URLSearchParams({ name: 'Yes', redirect_uris: 'https://yes.example/cb' }).toString(), { headers: FORM });
      expect(ok.status).toBe(201);
    } finally {
      await g.close();
      await gated.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

// The bridge's front doors for the fuzz (harness/fuzz): every request goes out in the browser of a
// signed-in user that also has a transaction waiting, so the session and transaction cookies come
// along; /token, /revoke and /introspect carry the client's Basic credentials and /userinfo that
// user's access token. Kept while fuzzing: another user's access token, still good afterwards.
import type { Check } from '../../../run/model.ts';
import { fuzzChecks, type FrontDoor } from '../../../fuzz/check.ts';
import type { Draft } from '../../../fuzz/mutations.ts';
import { loadOperations, specFile } from '../../../fuzz/operations.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { BridgeSession, said, type BridgeTarget } from '../driver.ts';

export function bridgeFuzzChecks(t: BridgeTarget): Check[] {
  return fuzzChecks(
    'bridge',
    { ids: { document: 'bridge/profile/fuzz', profile: 'bridge/profile/fuzz-statuses' }, document: ['ob.robustness.never-500'], profile: ['ob.errors.openapi-statuses'] },
    () => bridgeDoor(t),
  );
}

/** OAuth errors are `{error, error_description?}` (RFC 6749), the bridge's own `{error, detail}`, pages HTML. */
function envelope(text: string): boolean {
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    return typeof j.error === 'string';
  } catch {
    return /^\s*<(!doctype|html)/i.test(text);
  }
}

async function bridgeDoor(t: BridgeTarget): Promise<FrontDoor> {
  const s = new BridgeSession(t);
  const kept = await s.tokens();
  const fuzzed = await s.tokens();
  const browser = fuzzed.signIn.user.browser;
  const client = s.credentials('basic');
  const pkce = newPkce();
  const waiting = await s.openAuthorize(browser, { ...s.params('basic', pkce, 'st-fuzz', 'n-fuzz'), prompt: 'login' });
  const txId = waiting.location !== undefined ? /\/t\/([^/?#]+)/.exec(new URL(waiting.location, t.issuer).pathname)?.[1] : undefined;
  const token = String(fuzzed.body.access_token);
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret ?? '')}`).toString('base64')}`;
  const bodies: Record<string, Record<string, unknown>> = {
    token: { grant_type: 'authorization_code', code: 'A'.repeat(43), redirect_uri: client.redirect_uri, code_verifier: pkce.verifier },
    revoke: { token: 'not-the-kept-token' },
    introspect: { token },
    identify: { id: fuzzed.signIn.user.key.identity },
    consent: { decision: 'approve' },
  };
  const oidc = await s.oidc();
  const base = t.issuer;
  return {
    base,
    operations: loadOperations(specFile('bridge')),
    envelope,
    draft: async (op): Promise<Draft> => {
      const d: Draft = { params: { id: txId ?? 'AAAAAAAAAAAAAAAAAAAAAA', code: 'AAAAAAAA' }, query: op.id === 'authorize' ? { ...s.params('basic', newPkce(), 'st-f', 'n-f') } : {} };
      const body = bodies[op.id];
      return body ? { ...d, body: { ...body } } : op.bodyTypes.length > 0 ? { ...d, body: {} } : d;
    },
    open: async (op): Promise<Record<string, string>> =>
      ['token', 'revoke', 'introspect'].includes(op.id) ? { authorization: basic } : op.id === 'userinfo' ? { authorization: `Bearer ${token}` } : {},
    cap: () => undefined,
    request: async (method, url, headers, body, signal) => {
      const r = await browser.http.request(url, { method, headers, ...(body !== undefined ? { body } : {}), signal });
      return { status: r.status, text: r.text() };
    },
    keep: async () => async () => {
      const r = await s.http.get(oidc.discovery.userinfo_endpoint ?? `${base}/userinfo`, { headers: { authorization: `Bearer ${String(kept.body.access_token)}`, accept: 'application/json' } });
      return r.status === 200 ? undefined : `the access token issued before the fuzz no longer reads /userinfo: ${said(r)}`;
    },
    alive: async () => {
      const r = await s.http.get(`${base}/.well-known/openid-configuration`);
      return r.status === 200 ? undefined : `after the fuzz the discovery document answered ${said(r)}`;
    },
  };
}
